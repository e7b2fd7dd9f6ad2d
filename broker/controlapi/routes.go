// Package controlapi is the broker's HTTP side of the control API: the
// one route table (chi), JSON answers and error answers with their codes,
// request decoding, and the loopback guards every listener of the broker
// uses. The wire types, paths and codes it serves are api's.
package controlapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/berth-dev/berth/api"
	"github.com/go-chi/chi/v5"
)

// Backend is what the control API needs from the broker.
type Backend interface {
	Health() api.Health
	Projects() []api.Project
	Project(id string) (api.Project, error)
	Attach(ctx context.Context, req api.AttachRequest) (api.AttachResponse, error)
	Detach(id, lease string) error
	// MCPHandler serves the project's MCP endpoint over the control API to
	// the holder of lease, a live attach of that project.
	MCPHandler(id, lease string) (http.Handler, error)
	// Sessions lists a project's MCP sessions; CloseSession ends one.
	Sessions(id string) ([]api.Session, error)
	CloseSession(id, sid string) error
	// Shutdown begins a clean stop (or refuses it, see api.ShutdownRequest).
	Shutdown(req api.ShutdownRequest) (api.ShutdownResponse, error)
	// Servers lists hosted MCP servers: every mounted project's, or with
	// root set, that project's (servers.go).
	Servers(ctx context.Context, root string) (api.ServerList, error)
}

// HandlerOptions configures NewHandler.
type HandlerOptions struct {
	// Dashboard serves "/" when set.
	Dashboard http.Handler
	// CheckHost refuses requests whose Host is not loopback (TCP listeners;
	// the unix socket is protected by its file mode instead).
	CheckHost bool
	// AllowShutdown serves POST /shutdown: only on the 0600 unix socket,
	// never on TCP, so nothing but the user's own processes can stop the broker.
	AllowShutdown bool
	Logger        *slog.Logger
	// Metrics serves GET /metrics when set.
	Metrics http.Handler
	// Events serves GET /events (the dashboard's Server-Sent Events) when set.
	Events http.Handler
	// Search answers GET /projects/{id}/search?q=&n= when set.
	Search SearchFunc
	// RefuseBrowsers refuses mutating requests a web page could send
	// (RefuseBrowserRequests; TCP listeners: no browser reaches the socket).
	// Token, when set, admits them like the api.ClientHeader does.
	RefuseBrowsers bool
	Token          string
	// Login serves POST /dashboard/login when set, and POST /dashboard/link
	// too when IssueLogins is (the 0600 socket only).
	Login       Login
	IssueLogins bool
	// Servers serves POST /servers/approve, /servers/revoke and /servers/restart when set:
	// on the unix socket only.
	Servers *ServerActions
	// MaxBody is the largest request body a route takes (the shim's MCP
	// route's); 0 means api.MaxBodyBytes. Every body is read within
	// BodyTimeout before the routes see it (ReadBodies).
	MaxBody int64
}

// SearchFunc runs a standards search on project id; n is 0 for the default
// number of results. The result is written as JSON.
type SearchFunc func(ctx context.Context, id, query string, n int) (any, error)

// NewHandler is the control API's one route table.
func NewHandler(b Backend, opts HandlerOptions) http.Handler {
	r := chi.NewRouter()
	r.Use(versionHeader)
	maxBody := opts.MaxBody
	if maxBody <= 0 {
		maxBody = api.MaxBodyBytes
	}
	r.Use(ReadBodies(BodyTimeout, maxBody))
	r.Use(RefuseForeignOrigin)
	if opts.CheckHost {
		r.Use(LoopbackHostOnly)
	}
	if opts.RefuseBrowsers {
		var token []byte
		if opts.Token != "" {
			token = []byte("Bearer " + opts.Token)
		}
		r.Use(RefuseBrowserRequests(token))
	}
	r.Get("/health", func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, b.Health()) })
	r.Get("/projects", func(w http.ResponseWriter, _ *http.Request) {
		ps := b.Projects()
		WriteJSON(w, http.StatusOK, api.ProjectList{Projects: ps, Repositories: api.GroupRepositories(ps)})
	})
	r.Post("/projects", func(w http.ResponseWriter, req *http.Request) {
		var ar api.AttachRequest
		if err := DecodeJSON(w, req, &ar); err != nil {
			WriteError(w, err)
			return
		}
		resp, err := b.Attach(req.Context(), ar)
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, resp)
	})
	r.Get("/projects/{id}", func(w http.ResponseWriter, req *http.Request) {
		p, err := b.Project(chi.URLParam(req, "id"))
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, p)
	})
	r.Delete("/projects/{id}", func(w http.ResponseWriter, req *http.Request) {
		if err := b.Detach(chi.URLParam(req, "id"), req.URL.Query().Get("lease")); err != nil {
			WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	r.Get("/projects/{id}/sessions", func(w http.ResponseWriter, req *http.Request) {
		list, err := b.Sessions(chi.URLParam(req, "id"))
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, api.SessionList{Sessions: list})
	})
	r.Delete("/projects/{id}/sessions/{sid}", func(w http.ResponseWriter, req *http.Request) {
		if err := b.CloseSession(chi.URLParam(req, "id"), chi.URLParam(req, "sid")); err != nil {
			WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	r.HandleFunc("/projects/{id}/mcp", func(w http.ResponseWriter, req *http.Request) {
		h, err := b.MCPHandler(chi.URLParam(req, "id"), req.Header.Get(api.LeaseHeader))
		if err != nil {
			WriteError(w, err)
			return
		}
		h.ServeHTTP(w, req)
	})
	if opts.AllowShutdown {
		r.Post("/shutdown", func(w http.ResponseWriter, req *http.Request) {
			var sr api.ShutdownRequest
			if err := DecodeJSON(w, req, &sr); err != nil {
				WriteError(w, err)
				return
			}
			resp, err := b.Shutdown(sr)
			if err != nil {
				WriteError(w, err)
				return
			}
			WriteJSON(w, http.StatusAccepted, resp)
		})
	}
	if opts.Login != nil {
		loginRoutes(r, opts.Login, opts.IssueLogins)
	}
	serverRoutes(r, b, opts.Servers)
	if opts.Search != nil {
		r.Get("/projects/{id}/search", searchHandler(opts.Search))
	}
	if opts.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", opts.Metrics)
	}
	if opts.Events != nil {
		r.Method(http.MethodGet, "/events", opts.Events)
	}
	if opts.Dashboard != nil {
		r.Handle("/", opts.Dashboard)
		r.Handle("/assets/*", opts.Dashboard)
	}
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		WriteError(w, api.Errorf(http.StatusNotFound, api.CodeNoEndpoint, "no such endpoint %s %s (see GET /health, /projects)", req.Method, req.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		WriteError(w, api.Errorf(http.StatusMethodNotAllowed, api.CodeMethod, "method %s not allowed on %s", req.Method, req.URL.Path))
	})
	return r
}

func searchHandler(search SearchFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		n := 0
		if raw := q.Get("n"); raw != "" {
			v, err := strconv.Atoi(raw)
			if err != nil {
				WriteError(w, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "n=%q is not a number: pass how many results you want, e.g. n=5", raw))
				return
			}
			n = v
		}
		res, err := search(req.Context(), chi.URLParam(req, "id"), q.Get("q"), n)
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, res)
	}
}

func versionHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(api.VersionHeader, api.Version)
		next.ServeHTTP(w, r)
	})
}
