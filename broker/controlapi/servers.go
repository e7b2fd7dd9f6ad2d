package controlapi

import (
	"context"
	"net/http"

	"github.com/berth-dev/berth/api"
	"github.com/go-chi/chi/v5"
)

// ServerActions change hosted MCP servers: served on the unix socket only.
type ServerActions struct {
	// Approve records the user's approval of a project's declared servers
	// (POST /servers/approve).
	Approve func(ctx context.Context, req api.ApproveRequest) (api.ApproveResponse, error)
	// Revoke withdraws approvals: the servers stop and their tools go
	// (POST /servers/revoke).
	Revoke func(ctx context.Context, req api.RevokeRequest) (api.ProjectServers, error)
	// Restart starts a failed server again (POST /servers/restart).
	Restart func(ctx context.Context, req api.RestartRequest) (api.ProjectServers, error)
}

// serverRoutes adds GET /servers (?root=DIR for one project, mounted or
// not) and, when acts is set, POST /servers/approve, /servers/revoke and
// /servers/restart:
// like /shutdown they are for the 0600 socket only, since an approval lets
// a project's file run a command as the user.
func serverRoutes(r chi.Router, b Backend, acts *ServerActions) {
	r.Get("/servers", func(w http.ResponseWriter, req *http.Request) {
		list, err := b.Servers(req.Context(), req.URL.Query().Get("root"))
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, list)
	})
	if acts == nil {
		return
	}
	r.Post("/servers/approve", postJSON(acts.Approve))
	r.Post("/servers/revoke", postJSON(acts.Revoke))
	r.Post("/servers/restart", postJSON(acts.Restart))
}

// postJSON decodes a JSON body of type In, calls f and answers its result.
func postJSON[In, Out any](f func(context.Context, In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var in In
		if err := DecodeJSON(w, req, &in); err != nil {
			WriteError(w, err)
			return
		}
		out, err := f(req.Context(), in)
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, out)
	}
}
