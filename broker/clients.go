package broker

import (
	"net/http"
	"slices"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clients lists the mount's sessions that completed initialize, oldest
// first, as `berth clients`, GET /projects/{id}/sessions and the dashboard
// show them.
func (m *mount) clients() []api.Session {
	all := slices.Collect(m.mcp.Sessions())
	now := time.Now()
	out := make([]api.Session, 0, len(all))
	m.book.mu.Lock()
	for _, ss := range all {
		init := ss.InitializeParams()
		s := m.book.by[ss]
		if init == nil || s == nil || s.tr == nil {
			continue
		}
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
	}
	m.book.mu.Unlock()
	slices.SortFunc(out, func(a, b api.Session) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// sessionStates counts the mount's initialized sessions by state.
func (m *mount) sessionStates() (live, idle int) {
	for _, c := range m.clients() {
		if c.State == api.SessionIdle {
			idle++
		} else {
			live++
		}
	}
	return live, idle
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
