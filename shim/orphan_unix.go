//go:build unix

package shim

import (
	"context"
	"os"
	"time"
)

// parentPollInterval is how often the shim checks that its parent (the
// IDE) is still the process that started it.
const parentPollInterval = 500 * time.Millisecond

// errOrphaned ends a shim whose parent died.
type errOrphaned struct{ was, now int }

func (e errOrphaned) Error() string { return "the IDE that started this shim exited" }

// watchParent cancels ctx when the shim's parent process changes: the IDE
// died without closing stdin (its pipe may be inherited elsewhere). A shim
// started by init (parent pid 1) has nothing to watch.
func watchParent(ctx context.Context, cancel context.CancelCauseFunc) {
	start := os.Getppid()
	if start <= 1 {
		return
	}
	t := time.NewTicker(parentPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now := os.Getppid(); now != start {
				cancel(errOrphaned{was: start, now: now})
				return
			}
		}
	}
}
