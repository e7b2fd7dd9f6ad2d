package mcpserve

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goroutineIn is the stack of a goroutine whose stack holds fn, "" when
// none does.
func goroutineIn(fn string) string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for len(buf) == n {
		buf = make([]byte, 2*len(buf))
		n = runtime.Stack(buf, true)
	}
	for g := range bytes.SplitSeq(buf[:n], []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			return string(g)
		}
	}
	return ""
}

// waitGoroutine waits up to brokertest.WaitLimit for a goroutine whose stack holds fn and
// also holds one of at, and returns its stack.
func waitGoroutine(t *testing.T, fn string, at ...string) string {
	t.Helper()
	var g string
	found := brokertest.Poll(brokertest.WaitLimit, func() bool {
		g = goroutineIn(fn)
		for _, a := range at {
			if g != "" && bytes.Contains([]byte(g), []byte(a)) {
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("no goroutine in %s at %v; last seen:\n%s", fn, at, g)
	}
	return g
}

// Stop waits for a sweep in progress to return: a sweep in the middle of
// a save (held here on the store's lock) is waited for, so that the save
// its caller makes next (a closing mount's last) never races it.
func TestSweepStopWaitsForASweepInProgress(t *testing.T) {
	l := testLimits("p", 0, 0, 40*time.Millisecond) // a look every 10ms
	st, _ := testStore(t, time.Hour)
	srv := mcp.NewServer(&mcp.Implementation{Name: "swept", Version: "1"}, nil)
	sw := StartSweep(context.Background(), srv, l, st)
	st.mu.Lock()
	waitGoroutine(t, "(*Limits).Sweep(", "(*Store).Touch(") // its next look waits for the lock
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sw.Stop()
	}()
	waitGoroutine(t, "(*Sweep).Stop(", "[chan receive")
	select {
	case <-stopped:
		st.mu.Unlock()
		t.Fatal("Stop returned while the sweep was still saving")
	default:
	}
	st.mu.Unlock()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return once the sweep could finish")
	}
	if g := goroutineIn("(*Limits).Sweep("); g != "" {
		t.Fatalf("a sweep runs after Stop:\n%s", g)
	}
}
