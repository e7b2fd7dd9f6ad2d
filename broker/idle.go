package broker

import (
	"sync"
	"time"
)

// idleTimer fires once the mounts table has stayed empty for d. Only a
// broker a shim auto-started has one (d > 0).
type idleTimer struct {
	d    time.Duration
	fire func()

	mu sync.Mutex // guards t
	t  *time.Timer
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{d: d, fire: fire}
}

// set is told whether the table is empty after each change.
func (i *idleTimer) set(empty bool) {
	if i.d <= 0 {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if !empty {
		if i.t != nil {
			i.t.Stop()
			i.t = nil
		}
		return
	}
	if i.t == nil {
		i.t = time.AfterFunc(i.d, i.fire)
	}
}

func (i *idleTimer) stop() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.t != nil {
		i.t.Stop()
	}
}
