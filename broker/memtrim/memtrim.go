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
// row) costs one collection per gap and a last one after the run.
type Trimmer struct {
	req chan struct{}
}

// New starts a trimmer that lives until ctx ends. gap bounds the trims'
// rate: each is a full collection, whose marking takes CPU in proportion to
// the live heap.
func New(ctx context.Context, gap time.Duration) *Trimmer {
	t := &Trimmer{req: make(chan struct{}, 1)}
	go t.loop(ctx, gap)
	return t
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
