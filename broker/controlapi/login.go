package controlapi

import (
	"net/http"

	"github.com/berth-dev/berth/api"
	"github.com/go-chi/chi/v5"
)

// Login issues and redeems the dashboard's one-time login links: how a
// browser gets in where the broker cannot tell a connection's account
// (macOS), and everywhere `berth dashboard` is used.
type Login interface {
	// Link makes a one-time link to the dashboard.
	Link() (api.DashboardLink, error)
	// Redeem exchanges a link's code, once, for a session key.
	Redeem(code string) (api.DashboardSession, error)
}

// loginRoutes serves POST /dashboard/login and, with issue (the control
// socket), POST /dashboard/link.
func loginRoutes(r chi.Router, l Login, issue bool) {
	r.Post("/dashboard/login", func(w http.ResponseWriter, req *http.Request) {
		var lr api.DashboardLoginRequest
		if err := DecodeJSON(w, req, &lr); err != nil {
			WriteError(w, err)
			return
		}
		s, err := l.Redeem(lr.Code)
		if err != nil {
			WriteError(w, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		WriteJSON(w, http.StatusOK, s)
	})
	if !issue {
		return
	}
	r.Post("/dashboard/link", func(w http.ResponseWriter, _ *http.Request) {
		link, err := l.Link()
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, link)
	})
}
