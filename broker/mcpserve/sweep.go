package mcpserve

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sweep is the goroutine that ends a mount's sessions idle past their
// timeout or past keepIdle (Limits.Sweep) and, after each look, saves the
// activity of its saved sessions (Store.Touch).
type Sweep struct {
	stop context.CancelFunc
	done chan struct{} // closed when the goroutine has returned
}

// StartSweep starts the sweep of srv's sessions under l, saving to st,
// until ctx ends or Stop.
func StartSweep(ctx context.Context, srv *mcp.Server, l *Limits, st *Store) *Sweep {
	ctx, stop := context.WithCancel(ctx)
	s := &Sweep{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		l.Sweep(ctx, srv, func(now time.Time) { st.Touch(l.book, now, false) })
	}()
	return s
}

// Stop ends the sweep and waits for its goroutine: a sweep in progress
// ends its sessions and saves before Stop returns, so that what the caller
// saves next is never raced.
func (s *Sweep) Stop() {
	s.stop()
	<-s.done
}
