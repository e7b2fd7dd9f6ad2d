package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
)

// Backend is what the control API needs from the broker.
type Backend interface {
	Health() Health
	Projects() []Project
	Project(id string) (Project, error)
	Attach(ctx context.Context, req AttachRequest) (AttachResponse, error)
	Detach(id, lease string) error
	// MCPHandler serves the project's MCP endpoint over the control API.
	MCPHandler(id string) (http.Handler, error)
	// Shutdown begins a clean stop (or refuses it, see ShutdownRequest).
	Shutdown(req ShutdownRequest) (ShutdownResponse, error)
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
}

// SearchFunc runs a standards search on project id; n is 0 for the default
// number of results. The result is written as JSON.
type SearchFunc func(ctx context.Context, id, query string, n int) (any, error)

// NewHandler is the control API's one route table.
func NewHandler(b Backend, opts HandlerOptions) http.Handler {
	r := chi.NewRouter()
	r.Use(versionHeader)
	r.Use(RefuseForeignOrigin)
	if opts.CheckHost {
		r.Use(LoopbackHostOnly)
	}
	r.Get("/health", func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, b.Health()) })
	r.Get("/projects", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, ProjectList{Projects: b.Projects()})
	})
	r.Post("/projects", func(w http.ResponseWriter, req *http.Request) {
		var ar AttachRequest
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
	r.HandleFunc("/projects/{id}/mcp", func(w http.ResponseWriter, req *http.Request) {
		h, err := b.MCPHandler(chi.URLParam(req, "id"))
		if err != nil {
			WriteError(w, err)
			return
		}
		h.ServeHTTP(w, req)
	})
	if opts.AllowShutdown {
		r.Post("/shutdown", func(w http.ResponseWriter, req *http.Request) {
			var sr ShutdownRequest
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
		WriteError(w, Errorf(http.StatusNotFound, "no such endpoint %s %s (see GET /health, /projects)", req.Method, req.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		WriteError(w, Errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s", req.Method, req.URL.Path))
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
				WriteError(w, Errorf(http.StatusBadRequest, "n=%q is not a number: pass how many results you want, e.g. n=5", raw))
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
		w.Header().Set(VersionHeader, Version)
		next.ServeHTTP(w, r)
	})
}

// RefuseForeignOrigin refuses browser requests from pages that are not served
// from a loopback origin (a web page must not drive the local broker).
func RefuseForeignOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !IsLoopbackOrigin(o) {
			WriteError(w, Errorf(http.StatusForbidden, "origin %s is not allowed", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHostOnly refuses requests whose Host header is not a loopback name
// (DNS rebinding protection).
func LoopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsLoopbackHost(r.Host) {
			WriteError(w, Errorf(http.StatusForbidden, "host %q is not allowed: use 127.0.0.1 or localhost", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// IsLoopbackHost reports whether a Host header names a loopback address.
func IsLoopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackOrigin reports whether an Origin header is a loopback http(s) origin.
func IsLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopbackHost(u.Host)
}

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// WriteError writes err as {"error": "..."} with its status.
func WriteError(w http.ResponseWriter, err error) {
	WriteJSON(w, StatusOf(err), Error{Error: err.Error()})
}

// DecodeJSON reads a size-limited JSON body into v; unknown fields and
// trailing data are errors.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(http.StatusRequestEntityTooLarge, "request body is over %d bytes", MaxBodyBytes)
		}
		if errors.Is(err, io.EOF) {
			return Errorf(http.StatusBadRequest, "request body is empty: send a JSON object")
		}
		return Errorf(http.StatusBadRequest, "malformed JSON body: %v", err)
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, "malformed JSON body: trailing data after the object")
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(http.StatusRequestEntityTooLarge, "request body is over %d bytes", MaxBodyBytes)
		}
	}
	return nil
}

// ErrorBody extracts the message of a JSON error body, or the raw text.
func ErrorBody(status int, body []byte) error {
	var e Error
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return &StatusError{Code: status, Msg: e.Error}
	}
	return &StatusError{Code: status, Msg: fmt.Sprintf("broker answered %d: %s", status, strings.TrimSpace(string(body)))}
}
