package broker

import (
	"net/http"
	"slices"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eachSession calls f, with the book's lock held, for each session of srv
// that completed initialize and whose transport is known: the sessions a
// mount lists and counts. Short-lived protocol probes (such as a client's
// stateless server/discover) are not sessions.
func (b *sessionBook) eachSession(srv *mcp.Server, f func(init *mcp.InitializeParams, s *session)) {
	all := slices.Collect(srv.Sessions())
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ss := range all {
		init := ss.InitializeParams()
		s := b.by[ss]
		if init == nil || s == nil || s.tr == nil {
			continue
		}
		f(init, s)
	}
}

// clients lists the mount's sessions, oldest first, as `berth clients`,
// GET /projects/{id}/sessions and the dashboard show them.
func (m *mount) clients() []api.Session {
	now := time.Now()
	var out []api.Session
	m.book.eachSession(m.mcp, func(init *mcp.InitializeParams, s *session) {
		c := api.Session{ID: s.id, Transport: s.tr.name, StartedAt: s.started.UTC(), State: api.SessionLive, Counted: s.admitted}
		if init.ClientInfo != nil {
			c.Client, c.ClientVersion = init.ClientInfo.Name, init.ClientInfo.Version
		}
		if !s.busyLocked() {
			c.State, c.IdleSeconds = api.SessionIdle, now.Sub(s.idleSince).Seconds()
		}
		if s.out != nil {
			c.Dropped, c.StreamsCut = s.out.Dropped(), s.out.Cuts()
		}
		if s.tr.name == transportHTTP {
			c.Saved = m.saved.isSaved(s.id)
		}
		out = append(out, c)
	})
	if out == nil {
		out = []api.Session{}
	}
	slices.SortFunc(out, func(a, b api.Session) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// sessionCounts are a mount's sessions (those clients lists) counted by
// state and by transport name (transports with none left out).
type sessionCounts struct {
	live, idle  int
	byTransport map[string]int
}

// countSessions counts the mount's sessions.
func (m *mount) countSessions() sessionCounts {
	c := sessionCounts{byTransport: make(map[string]int, len(transports))}
	m.book.eachSession(m.mcp, func(_ *mcp.InitializeParams, s *session) {
		if s.busyLocked() {
			c.live++
		} else {
			c.idle++
		}
		c.byTransport[s.tr.name]++
	})
	return c
}

// closeClient ends the session called sid; false when there is none.
func (m *mount) closeClient(sid string) bool {
	var ss *mcp.ServerSession
	m.book.mu.Lock()
	for _, s := range m.book.by {
		if s.id == sid {
			ss = s.ss
			break
		}
	}
	m.book.mu.Unlock()
	if ss == nil {
		return false
	}
	m.log.Info("MCP session closed on request", "session", sid)
	m.endSession(ss)
	return true
}

// Sessions implements controlapi.Backend.
func (b *Broker) Sessions(id string) ([]api.Session, error) {
	m, _, err := b.mounts.get(id)
	if err != nil {
		return nil, err
	}
	return m.clients(), nil
}

// CloseSession implements controlapi.Backend.
func (b *Broker) CloseSession(id, sid string) error {
	m, _, err := b.mounts.get(id)
	if err != nil {
		return err
	}
	if !m.closeClient(sid) {
		return api.Errorf(http.StatusNotFound, api.CodeNoSession, "project %s has no MCP session %s (see `berth clients --project DIR`)", id, sid)
	}
	b.hub.Poke()
	return nil
}
