package broker

import (
	"context"

	"github.com/shirou/gopsutil/v4/process"
)

// processAlive reports whether pid is a live process. On error it answers
// true: a holder is never dropped on a doubtful check.
func processAlive(ctx context.Context, pid int) bool {
	ok, err := process.PidExistsWithContext(ctx, int32(pid))
	if err != nil {
		return true
	}
	if !ok {
		return false
	}
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return true
	}
	st, err := p.StatusWithContext(ctx)
	if err == nil && len(st) > 0 && st[0] == process.Zombie {
		return false
	}
	return true
}
