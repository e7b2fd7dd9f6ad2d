package lockorder

import (
	"strings"
	"testing"
)

type first struct{}

func (first) Rank() (int, string) { return 1, "first" }

type second struct{}

func (second) Rank() (int, string) { return 2, "second" }

// lockPanics takes b while holding a and returns the panic, if any.
func lockPanics(a interface {
	Lock()
	Unlock()
}, b interface {
	Lock()
	Unlock()
}) (msg string) {
	a.Lock()
	defer a.Unlock()
	defer func() {
		if v := recover(); v != nil {
			msg = v.(string)
		}
	}()
	b.Lock()
	b.Unlock()
	return ""
}

func TestOrderIsChecked(t *testing.T) {
	var a Mutex[first]
	var b, b2 Mutex[second]
	if msg := lockPanics(&a, &b); msg != "" {
		t.Fatalf("first then second: %s", msg)
	}
	msg := lockPanics(&b, &a)
	if !Checking {
		if msg != "" {
			t.Fatalf("a build without the tag checked: %s", msg)
		}
		t.Skip("built without -tags lockorder: the order is not checked")
	}
	if !strings.Contains(msg, "first (rank 1) taken while second (rank 2) is held") {
		t.Fatalf("second then first: panic %q, want the inversion named", msg)
	}
	if msg := lockPanics(&b, &b2); !strings.Contains(msg, "second (rank 2) taken while second (rank 2) is held") {
		t.Fatalf("two locks of one rank: panic %q, want it named", msg)
	}
	// Released locks are forgotten: the order holds again.
	if msg := lockPanics(&a, &b); msg != "" {
		t.Fatalf("first then second after the panics: %s", msg)
	}
}
