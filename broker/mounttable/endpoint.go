package mounttable

import (
	"net/http"
	"time"

	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/project"
)

// endpoint is what the broker serves of the project id beside the IDE's
// stdio, for its get_server_info.
func (table *Table) endpoint(id string) project.Endpoint {
	table.mu.Lock()
	sl := table.slots[id]
	if sl == nil || sl.m == nil {
		table.mu.Unlock()
		return project.Endpoint{}
	}
	m, h := sl.m, sl.heldLocked()
	table.mu.Unlock()
	return project.Endpoint{Mode: h.published, URL: m.url(), Missing: missing(m, h.stateErr)}
}

// portHealth is GET /health on a project's port: this project's own facts
// and nothing another project could use (no paths, no other projects, no
// broker internals).
type portHealth struct {
	Status        string      `json:"status"` // "ok"
	Project       portProject `json:"project"`
	Index         portIndex   `json:"index"`
	UptimeSeconds float64     `json:"uptime_seconds"` // since the project was mounted
	StartedAt     time.Time   `json:"started_at"`
}

type portProject struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type portIndex struct {
	State  string `json:"state"` // loading, indexing, ready; "off" when the rag tool group is off
	Files  int    `json:"files"`
	Chunks int    `json:"chunks"`
}

// serveHealth answers GET /health on the project's port.
func (m *Mount) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h := portHealth{
		Status:        "ok",
		Project:       portProject{ID: m.id, Name: m.name},
		Index:         portIndex{State: "off"},
		UptimeSeconds: time.Since(m.startedAt).Seconds(),
		StartedAt:     m.startedAt.UTC(),
	}
	if st, ok := m.engine.IndexStatus(); ok {
		h.Index = portIndex{State: st.State, Files: st.Files, Chunks: st.Chunks}
	}
	controlapi.WriteJSON(w, http.StatusOK, h)
}
