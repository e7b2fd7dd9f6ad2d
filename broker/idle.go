package broker

import (
	"net"
	"net/http"
	"time"
)

// idleTimer fires once the broker has had no mounts and no open control
// connections of its owner for d. Only a broker a shim auto-started has
// one (d > 0). A TCP connection counts from its first admitted request
// (the peer guard's Admitted): another account's connections, refused,
// never keep the broker up.
type idleTimer struct {
	d    time.Duration
	fire func()

	mu      idleLock // guards the fields below
	noMount bool     // the mounts table is empty
	// conns are the open control API connections that count (hijacked
	// ones leave: they are the shims', held by leases).
	conns map[net.Conn]bool
	t     *time.Timer
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{d: d, fire: fire, conns: make(map[net.Conn]bool)}
}

// set is told whether the mounts table is empty after each change.
func (i *idleTimer) set(empty bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.noMount = empty
	i.updateLocked()
}

// socketState is the control socket server's ConnState hook: every
// connection counts from the start (only the owner can open the socket).
func (i *idleTimer) socketState(c net.Conn, s http.ConnState) {
	if s == http.StateNew {
		i.track(c)
		return
	}
	i.tcpState(c, s)
}

// tcpState is a guarded TCP server's ConnState hook: a connection stops
// counting when it closes or is hijacked; it starts with track.
func (i *idleTimer) tcpState(c net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.conns[c] {
		delete(i.conns, c)
		i.updateLocked()
	}
}

// track counts c until it closes.
func (i *idleTimer) track(c net.Conn) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.conns[c] = true
	i.updateLocked()
}

func (i *idleTimer) updateLocked() {
	if i.d <= 0 {
		return
	}
	if !i.noMount || len(i.conns) > 0 {
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
