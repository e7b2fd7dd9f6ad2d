package mounttable

import (
	"context"
	"time"

	"github.com/berth-dev/berth/api"
)

// Housekeep keeps the table true to the machine until ctx ends: every
// reap_interval it releases the leases of shims that died and binds the
// ports and writes the state files that failed (portretry.go); every
// vanishInterval it unmounts the roots that vanished (vanish.go), and
// every forgetEvery of those it forgets removed git worktrees
// (worktrees.go). The caller runs it in a goroutine it waits for.
func (table *Table) Housekeep(ctx context.Context) {
	reap := time.NewTicker(table.cfg.ReapInterval)
	defer reap.Stop()
	vanish := time.NewTicker(min(table.cfg.ReapInterval, vanishInterval))
	defer vanish.Stop()
	for ticks := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-reap.C:
			table.reap(api.ProcessAlive)
			table.retryDegraded()
		case <-vanish.C:
			table.dropVanished()
			if ticks++; ticks%forgetEvery == 1 {
				table.forgetRemovedWorktrees()
			}
		}
	}
}
