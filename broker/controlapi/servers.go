package controlapi

import (
	"context"
	"net/http"

	"github.com/berth-dev/berth/api"
	"github.com/go-chi/chi/v5"
)

// ApproveFunc records the user's approval of a project's declared MCP
// servers (POST /servers/approve).
type ApproveFunc func(ctx context.Context, req api.ApproveRequest) (api.ApproveResponse, error)

// serverRoutes adds GET /servers (?root=DIR for one project, mounted or
// not) and, when approve is set, POST /servers/approve: like /shutdown it
// is for the 0600 socket only, since an approval lets a project's file run
// a command as the user.
func serverRoutes(r chi.Router, b Backend, approve ApproveFunc) {
	r.Get("/servers", func(w http.ResponseWriter, req *http.Request) {
		list, err := b.Servers(req.Context(), req.URL.Query().Get("root"))
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, list)
	})
	if approve == nil {
		return
	}
	r.Post("/servers/approve", func(w http.ResponseWriter, req *http.Request) {
		var ar api.ApproveRequest
		if err := DecodeJSON(w, req, &ar); err != nil {
			WriteError(w, err)
			return
		}
		resp, err := approve(req.Context(), ar)
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, resp)
	})
}
