// Package memtrim gives the system back the memory a burst of work left
// behind, once the burst is over.
//
// Mounting a project is such a burst: its index is built, its files read,
// its servers made, and most of what that allocates is garbage a moment
// later. The Go runtime keeps the pages of that garbage until the heap grows
// back into them (the collector lets the heap reach twice what is live before
// it collects, and the scavenger returns only what lies beyond that goal), so
// a broker that mounted fifty projects and then sat idle held about twice
// their live memory. A [Trimmer] runs a collection and returns the freed
// pages (runtime/debug.FreeOSMemory) after such bursts, at most once per gap.
package memtrim

import (
	"context"
	"runtime/debug"
	"time"
)

// Trimmer coalesces requests to trim: one goroutine trims, then waits at
// least its gap before the next trim, so a run of bursts (many mounts in a
// row) costs one collection per gap and a last one after the run. Its
// owner ends that goroutine with Close.
type Trimmer struct {
	req  chan struct{}
	stop context.CancelFunc
	done chan struct{} // closed when the goroutine has returned
}

// New starts a trimmer that lives until Close or until ctx ends. gap bounds
// the trims' rate: each is a full collection, whose marking takes CPU in
// proportion to the live heap.
func New(ctx context.Context, gap time.Duration) *Trimmer {
	ctx, stop := context.WithCancel(ctx)
	t := &Trimmer{req: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.loop(ctx, gap)
	}()
	return t
}

// Close stops the trimmer and returns once its goroutine has: a trim under
// way finishes first, a wait for the gap ends at once. Requests after it
// are ignored. Close may be called more than once.
func (t *Trimmer) Close() {
	if t == nil {
		return
	}
	t.stop()
	<-t.done
}

// Request asks for a trim soon; it never blocks, and requests made while
// one waits are one.
func (t *Trimmer) Request() {
	if t == nil {
		return
	}
	select {
	case t.req <- struct{}{}:
	default:
	}
}

func (t *Trimmer) loop(ctx context.Context, gap time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.req:
		}
		debug.FreeOSMemory()
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
	}
}
