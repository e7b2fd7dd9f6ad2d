package hosted

import (
	"context"
	"math/rand/v2"
	"time"
)

// A pool bounds how many server processes are in their start at once
// (Options.MaxStarting): a process starting, its MCP handshake and its
// first listing. The first tools/list of a project starts every lazy
// server it declares; started all together on a small, loaded machine
// they share the CPU until each misses its StartTimeout, and restarting
// them all together again never converges. The others wait their turn
// in StateStarting, and a server's StartTimeout counts from when its turn
// begins. A url server takes no turn: its start costs this machine
// nothing.

// startTurns hands out the pool's start turns; one is held from a
// process's start until its first listing ends.
type startTurns chan struct{}

func newStartTurns(n int) startTurns { return make(startTurns, n) }

// take waits for a turn until ctx ends; release gives it back.
func (t startTurns) take(ctx context.Context) (release func(), err error) {
	select {
	case t <- struct{}{}:
		return func() { <-t }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// backoff is the delay before restart number n (1 for the first) of a
// server: BackoffMin doubled per crash up to BackoffMax, then drawn at
// random from its upper half, so that servers that crashed together
// (all missing their start on a loaded machine) do not all start again
// together.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := hi
	if n < 63 && lo<<(n-1) > 0 {
		d = min(lo<<(n-1), hi)
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
