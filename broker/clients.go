package broker

import (
	"net/http"

	"github.com/berth-dev/berth/api"
)

// Sessions implements controlapi.Backend.
func (b *Broker) Sessions(id string) ([]api.Session, error) {
	m, _, err := b.mounts.Get(id)
	if err != nil {
		return nil, err
	}
	return m.Clients(), nil
}

// CloseSession implements controlapi.Backend.
func (b *Broker) CloseSession(id, sid string) error {
	m, _, err := b.mounts.Get(id)
	if err != nil {
		return err
	}
	if !m.CloseClient(sid) {
		return api.Errorf(http.StatusNotFound, api.CodeNoSession, "project %s has no MCP session %s (see `berth clients --project DIR`)", id, sid)
	}
	b.hub.Poke()
	return nil
}
