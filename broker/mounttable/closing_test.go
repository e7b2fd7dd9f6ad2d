package mounttable

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
)

// A mount out of the table but still closing (its port bound, its engine
// open) is not yet "not mounted": the lookup waits for the close to end.
func TestLookupWaitsForAMountClosing(t *testing.T) {
	table := &Table{ctx: context.Background(), slots: map[string]*slot{}}
	table.mu.Lock()
	closed := table.beginClosingLocked("p-1")
	table.mu.Unlock()
	answered := make(chan error, 1)
	go func() {
		_, _, err := table.Get("p-1")
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("lookup answered while the mount was closing: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	closed()
	select {
	case err := <-answered:
		if !errors.Is(err, api.CodeNotMounted) {
			t.Fatalf("lookup once closed: %v, want %s", err, api.CodeNotMounted)
		}
	case <-time.After(closeWaitLimit):
		t.Fatal("lookup still waiting after the close ended")
	}
	if _, _, err := table.Get("p-2"); !errors.Is(err, api.CodeNotMounted) {
		t.Fatalf("lookup of a project never mounted: %v", err)
	}
}
