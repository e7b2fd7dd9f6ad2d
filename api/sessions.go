package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Session states: a live session has a request in flight or a stream open
// (an SSE or WebSocket connection, a GET on /mcp, the shim's bridge); an
// idle one has neither, and may be evicted when its project is full.
const (
	SessionLive = "live"
	SessionIdle = "idle"
)

// Session is one MCP session of a project (GET /projects/{id}/sessions).
type Session struct {
	// ID is the session's Mcp-Session-Id on /mcp, else a name the broker
	// gives it; DELETE /projects/{id}/sessions/{sid} ends it.
	ID        string `json:"id"`
	Transport string `json:"transport"`
	// Client and ClientVersion are the clientInfo of its initialize.
	Client        string    `json:"client,omitempty"`
	ClientVersion string    `json:"client_version,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	// IdleSeconds is how long it has been idle (0 while live).
	IdleSeconds float64 `json:"idle_seconds"`
	State       string  `json:"state"` // SessionLive or SessionIdle
	// Counted is true for sessions mcp.max_sessions counts (not the IDE's).
	Counted bool `json:"counted"`
	// Dropped counts the notifications it lost by reading too slowly, and
	// StreamsCut the streams (GET streams on /mcp) cut for it.
	Dropped    int64 `json:"dropped_notifications,omitempty"`
	StreamsCut int64 `json:"streams_cut,omitempty"`
	// Saved is set once a streamable HTTP session is in berth.db (a moment
	// after its initialize): a broker restart keeps it under its id.
	Saved bool `json:"saved,omitempty"`
}

// SessionList is the body of GET /projects/{id}/sessions, oldest first.
type SessionList struct {
	Sessions []Session `json:"sessions"`
}

// Sessions calls GET /projects/{id}/sessions.
func (c *Client) Sessions(ctx context.Context, id string) ([]Session, error) {
	var l SessionList
	return l.Sessions, c.do(ctx, http.MethodGet, "/projects/"+url.PathEscape(id)+"/sessions", nil, &l)
}

// CloseSession calls DELETE /projects/{id}/sessions/{sid}: the session ends
// (on /mcp its next request gets 404).
func (c *Client) CloseSession(ctx context.Context, id, sid string) error {
	return c.do(ctx, http.MethodDelete, "/projects/"+url.PathEscape(id)+"/sessions/"+url.PathEscape(sid), nil, nil)
}
