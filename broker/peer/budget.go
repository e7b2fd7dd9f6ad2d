package peer

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Budget bounds the connections not yet known to be the owner's, across
// every listener whose guard shares it. Another account can open
// connections and send nothing; each costs a file descriptor until its
// first request is read (the server's header timeout). Within the budget
// a connection is accepted at once and checked at its first request, as
// ever; past it, [Guard.Listener] checks each new connection as it is
// accepted: the owner's are served, any other is closed at once. So
// another account cannot hold more than the budget's worth of the
// broker's descriptors, and the owner is served however many it holds.
type Budget struct {
	max  int64
	used atomic.Int64
}

// NewBudget returns a budget of n connections (at least 1).
func NewBudget(n int) *Budget {
	return &Budget{max: int64(max(n, 1))}
}

// take counts one more connection, or reports false when the budget is spent.
func (b *Budget) take() bool {
	if b.used.Add(1) > b.max {
		b.used.Add(-1)
		return false
	}
	return true
}

func (b *Budget) give() { b.used.Add(-1) }

// InUse is how many connections the budget counts now.
func (b *Budget) InUse() int { return int(b.used.Load()) }

// Listener returns ln with the guard's budget applied (ln itself when the
// guard has none): see [Budget]. Serve it with a server the guard is
// installed on.
func (g *Guard) Listener(ln net.Listener) net.Listener {
	if g.budget == nil {
		return ln
	}
	return &budgeted{Listener: ln, g: g}
}

type budgeted struct {
	net.Listener
	g *Guard

	shedMu   sync.Mutex
	shed     int       // connections closed at accept since the last log line
	shedLast time.Time // when that line was written
}

// Accept returns the next connection that is within the budget or is the
// owner's; the others are closed as they come.
func (l *budgeted) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		pc := &conn{Conn: c}
		if l.g.budget.take() {
			pc.counted.Store(l.g.budget)
			return pc, nil
		}
		// Over the budget: tell now, while the connection costs nothing yet.
		pc.once.Do(func() { pc.uid, pc.err = l.g.lookup(c) })
		if pc.err == nil && pc.uid == l.g.owner {
			return pc, nil
		}
		c.Close()
		l.noteShed(pc.uid, pc.err)
	}
}

// shedLogEvery bounds the log lines about connections closed at accept.
const shedLogEvery = 10 * time.Second

// noteShed logs closed connections: the first at once, then at most one
// line (with the count) every shedLogEvery.
func (l *budgeted) noteShed(uid uint32, err error) {
	l.shedMu.Lock()
	l.shed++
	now := time.Now()
	if now.Sub(l.shedLast) < shedLogEvery {
		l.shedMu.Unlock()
		return
	}
	n := l.shed
	l.shed, l.shedLast = 0, now
	l.shedMu.Unlock()
	args := []any{"listener", l.g.name, "closed", n, "budget", l.g.budget.max}
	if err != nil {
		args = append(args, "err", err)
	} else {
		args = append(args, "peer_uid", uid)
	}
	l.g.log.Warn("closed new connections at once: too many connections not known to be the owner's are open (another account's, most likely)", args...)
}
