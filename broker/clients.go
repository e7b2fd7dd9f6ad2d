package broker

import (
	"net/http"

	"github.com/berth-dev/berth/api"
)

// clients lists the mount's sessions, oldest first, as `berth clients`,
// GET /projects/{id}/sessions and the dashboard show them.
func (m *mount) clients() []api.Session {
	return m.book.Clients(m.mcp, m.saved)
}

// closeClient ends the session called sid; false when there is none.
func (m *mount) closeClient(sid string) bool {
	ss := m.book.Find(sid)
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
