package broker

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// idleTimer fires once the broker has had no mounts and no open control
// connections for d. Only a broker a shim auto-started has one (d > 0).
type idleTimer struct {
	d    time.Duration
	fire func()

	mu      sync.Mutex // guards the fields below
	noMount bool       // the mounts table is empty
	conns   int        // open control API connections (hijacked ones are the shims', held by leases)
	t       *time.Timer
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{d: d, fire: fire}
}

// set is told whether the mounts table is empty after each change.
func (i *idleTimer) set(empty bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.noMount = empty
	i.updateLocked()
}

// connState is the control servers' http.Server.ConnState hook.
func (i *idleTimer) connState(_ net.Conn, s http.ConnState) {
	i.mu.Lock()
	defer i.mu.Unlock()
	switch s {
	case http.StateNew:
		i.conns++
	case http.StateClosed, http.StateHijacked:
		i.conns--
	default:
		return
	}
	i.updateLocked()
}

func (i *idleTimer) updateLocked() {
	if i.d <= 0 {
		return
	}
	if !i.noMount || i.conns > 0 {
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
	i.d = 0
	if i.t != nil {
		i.t.Stop()
	}
}
