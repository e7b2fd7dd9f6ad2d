package broker

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/berth-dev/berth/project"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport names reported by get_server_info.
const (
	transportStdio = "stdio"     // the shim's bridge over the control socket
	transportHTTP  = "http"      // streamable HTTP
	transportSSE   = "sse"       // legacy SSE
	transportWS    = "websocket" // MCP over WebSocket
)

// mount is a project being served: its engine, its MCP servers and the
// listener that holds its port. Its fields are set once by newMount; holders
// and timers live in the mounts table under its lock.
type mount struct {
	id, root, name string
	engine         *project.Engine
	port           int
	ln             net.Listener
	srv            *http.Server
	servers        []*mcp.Server
	shimHandler    http.Handler // /projects/{id}/mcp on the control API
	startedAt      time.Time
	log            *slog.Logger
	done           chan struct{}      // closed when srv.Serve returns
	stopIdle       context.CancelFunc // ends the idle-session check
	observer       *observer          // tool calls and sessions, per transport
}

type mountDeps struct {
	log            *slog.Logger
	sessionTimeout time.Duration
	token          string // bearer token required on the port; "" = none
	onCall         func(*mount, api.ToolCall)
}

// newMount opens the engine and starts serving on ln (already bound).
func newMount(ctx context.Context, eng *project.Engine, id string, ln net.Listener, deps mountDeps) *mount {
	port := ln.Addr().(*net.TCPAddr).Port
	m := &mount{
		id:        id,
		root:      eng.Root(),
		name:      eng.Name(),
		engine:    eng,
		port:      port,
		ln:        ln,
		startedAt: time.Now(),
		log:       deps.log.With("project", id, "port", port),
		done:      make(chan struct{}),
	}
	stdioSrv := eng.NewServer(transportStdio)
	httpSrv := eng.NewServer(transportHTTP)
	sseSrv := eng.NewServer(transportSSE)
	wsSrv := eng.NewServer(transportWS)
	m.servers = []*mcp.Server{stdioSrv, httpSrv, sseSrv, wsSrv}
	cfg := eng.Config().MCP
	lim := newLimits(m.name, cfg.MaxSessions, cfg.MaxToolCalls, deps.sessionTimeout)
	stdioSrv.AddReceivingMiddleware(lim.middleware(kindIDE))
	httpSrv.AddReceivingMiddleware(lim.middleware(kindStreamable))
	sseSrv.AddReceivingMiddleware(lim.middleware(kindStream))
	wsSrv.AddReceivingMiddleware(lim.middleware(kindStream))
	idleCtx, stopIdle := context.WithCancel(ctx)
	m.stopIdle = stopIdle
	go lim.closeIdle(idleCtx, sseSrv, wsSrv)
	// Outermost: it sees every call, those the limits refuse included.
	m.observer = observe(m, map[string]*mcp.Server{transportStdio: stdioSrv, transportHTTP: httpSrv, transportSSE: sseSrv, transportWS: wsSrv}, deps.onCall)

	streamOpts := &mcp.StreamableHTTPOptions{SessionTimeout: deps.sessionTimeout, Logger: m.log}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return httpSrv }, streamOpts))
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return sseSrv }, nil))
	mux.Handle("/ws", mcpws.Handler(wsSrv, m.log, nil))
	mux.HandleFunc("/{$}", m.serveIndex)

	h := lim.refuseSessions(checkPosts(mux))
	if deps.token != "" {
		h = requireToken(deps.token, h)
	}
	h = controlapi.LoopbackHostOnly(controlapi.RefuseForeignOrigin(h))
	m.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelDebug),
	}

	shimWS := mcpws.Handler(stdioSrv, m.log, nil)
	shimHTTP := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stdioSrv }, streamOpts)
	m.shimHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			shimWS.ServeHTTP(w, r)
			return
		}
		shimHTTP.ServeHTTP(w, r)
	})

	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("project endpoint stopped", "err", err)
		}
	}()
	return m
}

// sessions counts the live MCP sessions on every transport: those that
// completed an initialize handshake. Short-lived protocol probes (such as
// a client's stateless server/discover) are not sessions.
func (m *mount) sessions() int {
	n := 0
	for _, s := range m.servers {
		for ss := range s.Sessions() {
			if ss.InitializeParams() != nil {
				n++
			}
		}
	}
	return n
}

func (m *mount) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", m.port) }

// close stops serving, ends every session and releases the port.
func (m *mount) close(ctx context.Context) {
	m.stopIdle()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, s := range m.servers {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}
	if err := m.srv.Shutdown(ctx); err != nil {
		m.srv.Close()
	}
	<-m.done
	if err := m.engine.Close(); err != nil {
		m.log.Warn("close engine", "err", err)
	}
}

func (m *mount) serveIndex(w http.ResponseWriter, _ *http.Request) {
	controlapi.WriteJSON(w, http.StatusOK, map[string]any{
		"project":   map[string]string{"id": m.id, "name": m.name, "root": m.root},
		"endpoints": map[string]string{"streamable_http": "/mcp", "sse": "/sse", "websocket": "/ws"},
	})
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
			controlapi.WriteError(w, api.Errorf(http.StatusUnauthorized, api.CodeUnauthorized, "missing or wrong bearer token: send the headers from the project's state file"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
