package memtrim

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collections is how many collections the runtime has finished.
func collections() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// waitCollections waits until the runtime has finished more than n
// collections, for at most 10 s.
func waitCollections(t *testing.T, n uint32) uint32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c := collections(); c > n {
			return c
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no collection within 10 s of the request (still %d)", n)
	return 0
}

func TestRequestTrimsAndCoalesces(t *testing.T) {
	const gap = time.Hour // no second trim within the test
	tr := New(context.Background(), gap)
	defer tr.Close()

	before := collections()
	tr.Request()
	after := waitCollections(t, before)

	// Within the gap, any number of requests wait as one: no collection
	// of the trimmer's runs meanwhile (the test allocates next to nothing,
	// so the runtime starts none of its own).
	for range 100 {
		tr.Request()
	}
	time.Sleep(200 * time.Millisecond)
	if c := collections(); c != after {
		t.Fatalf("%d collections during the gap, want none", c-after)
	}
	if len(tr.req) != 1 {
		t.Fatalf("%d requests pending, want them coalesced into 1", len(tr.req))
	}
}

// stacksHold reports whether any goroutine's stack holds frame, from one
// look at every stack (no retry: what Close promises holds when it returns).
func stacksHold(frame string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), frame)
}

// The goroutine New starts exists from before it first runs; its loop has
// returned once Close has (the goroutine itself may still be on its way
// out: it closes done after the loop, so only the loop's frame is checked).
const (
	trimmerStarted = "created by github.com/berth-dev/berth/broker/memtrim.New"
	trimmerLoop    = "memtrim.(*Trimmer).loop"
)

func TestCloseWaitsForTheGoroutine(t *testing.T) {
	// A context that never ends: Close alone must end the goroutine.
	tr := New(context.Background(), time.Hour)
	t.Cleanup(tr.Close)
	if !stacksHold(trimmerStarted) {
		t.Fatal("no trimmer goroutine after New")
	}
	// Trim once, so that the goroutine is waiting out the hour's gap.
	before := collections()
	tr.Request()
	waitCollections(t, before)

	tr.Close()
	if stacksHold(trimmerLoop) {
		t.Fatal("the trimmer's loop still runs after Close returned")
	}
	tr.Request() // ignored: must not block or panic
	tr.Close()   // a second Close returns at once
}

func TestContextEndStopsTrimmer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tr := New(ctx, time.Hour)
	cancel()
	tr.Close() // returns once the goroutine the cancel ended has returned
	if stacksHold(trimmerLoop) {
		t.Fatal("the trimmer's loop still runs after its context ended and Close returned")
	}
}

func TestNilTrimmerIgnoresRequests(t *testing.T) {
	var tr *Trimmer
	tr.Request() // must not panic: mounts made without a trimmer in tests
	tr.Close()
}
