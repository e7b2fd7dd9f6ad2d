package hosted

import (
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// byLease keeps one value per project holding a server (its lease).
type byLease[T any] struct {
	mu sync.Mutex // a leaf: nothing is called while it is held
	m  map[*lease]T
}

func (b *byLease[T]) add(l *lease, v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[*lease]T{}
	}
	b.m[l] = v
}

func (b *byLease[T]) remove(l *lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, l)
}

// all copies the values, to be used without the lock.
func (b *byLease[T]) all() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]T, 0, len(b.m))
	for _, v := range b.m {
		out = append(out, v)
	}
	return out
}

// echoes are the loggers of the projects holding a share: user server
// (ProjectSpec.Echo): its stderr lines are logged once to the broker's log
// and also kept in each holding project's recent logs.
type echoes struct{ byLease[*slog.Logger] }

// line logs one stderr line of the server to every holder's logger.
func (e *echoes) line(server, text string) {
	for _, l := range e.all() {
		l.Info("hosted server stderr", "server", server, "line", text)
	}
}

// LogRelay gets the notifications/message a hosted server sends, with the
// server's name, for the sessions of a project holding it.
type LogRelay func(server string, msg *mcp.LoggingMessageParams)

// relays are the LogRelays of the projects holding a server.
type relays struct{ byLease[LogRelay] }

// send passes msg on to every holder.
func (r *relays) send(server string, msg *mcp.LoggingMessageParams) {
	for _, f := range r.all() {
		f(server, msg)
	}
}
