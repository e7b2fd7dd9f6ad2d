package broker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/project"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mount is a project being served: its engine, the engine's MCP server
// (one for every transport) and the listener that holds its port. Its
// fields are set once by newMount; holders and timers live in the mounts
// table under its lock.
//
// The port may come later: with none free, the mount serves the IDE's
// sessions (the shim's route on the control API) and the broker binds one
// when it can (portretry.go).
type mount struct {
	id, root, name string
	engine         *project.Engine
	ctx            context.Context // the broker's lifetime, for the port's requests
	handler        http.Handler    // the port's routes, served once it is bound
	mcp            *mcp.Server     // the engine's: every transport's sessions are its sessions
	shimHandler    http.Handler    // /projects/{id}/mcp on the control API
	guard          *peer.Guard     // the account check, installed on the port's server when it is bound
	startedAt      time.Time
	log            *slog.Logger
	stopIdle       context.CancelFunc // ends the idle-session check
	observer       *observer          // tool calls
	tags           *sessionTags       // each session's transport
	servers        *mountServers      // hosted MCP servers (servers.go); nil when off
	stateMu        sync.Mutex         // serializes the writes of its state file (statefile.go)

	httpMu  sync.Mutex // guards the port's fields, set once when it is bound
	port    int        // 0 while the mount has no port
	srv     *http.Server
	done    chan struct{} // closed when srv.Serve returns
	portErr error         // why the mount has no port yet
	closed  bool
}

type mountDeps struct {
	log            *slog.Logger
	sessionTimeout time.Duration
	token          string // the bearer token: admits a request from any account; "" = none
	tokenOnly      bool   // no account check: only the token admits
	onCall         func(*mount, api.ToolCall)
	servers        *mountServers // installed on the engine's server; its middleware goes innermost
}

// newMount serves the engine's sessions and starts serving its port on ln
// (already bound), or with ln nil records portErr, why it has none.
func newMount(ctx context.Context, eng *project.Engine, id string, ln net.Listener, portErr error, deps mountDeps) *mount {
	m := &mount{
		id:        id,
		root:      eng.Root(),
		name:      eng.Name(),
		engine:    eng,
		ctx:       ctx,
		startedAt: time.Now(),
		log:       deps.log.With("project", id),
		portErr:   portErr,
	}
	m.mcp = eng.Server()
	m.tags = newSessionTags()
	if m.servers = deps.servers; m.servers != nil {
		// Inside the limits and the observer: starting a lazy server counts
		// against a call's slot, and its failures are the call's.
		m.mcp.AddReceivingMiddleware(m.servers.hp.Middleware())
	}
	cfg := eng.Config().MCP
	lim := newLimits(m.name, cfg.MaxSessions, cfg.MaxToolCalls, deps.sessionTimeout)
	m.mcp.AddReceivingMiddleware(lim.middleware)
	idleCtx, stopIdle := context.WithCancel(ctx)
	m.stopIdle = stopIdle
	go lim.closeIdle(idleCtx, m.mcp, m.tags)
	// Outside the limits: it sees every call, those they refuse included.
	m.observer = observe(m, m.mcp, deps.onCall)
	// Outermost: a session is tagged at its first request, whatever follows.
	m.mcp.AddReceivingMiddleware(m.tags.middleware)

	hd := handlerDeps{streamOpts: &mcp.StreamableHTTPOptions{SessionTimeout: deps.sessionTimeout, Logger: m.log}, tags: m.tags, log: m.log}
	mux := http.NewServeMux()
	for _, tr := range transports {
		if tr.path == "" {
			m.shimHandler = tr.serve(m.mcp, hd)
			continue
		}
		mux.Handle(tr.path, tr.serve(m.mcp, hd))
	}
	mux.HandleFunc("/{$}", m.serveIndex)
	mux.HandleFunc("GET /health", m.serveHealth)

	h := lim.refuseSessions(checkPosts(mux))
	m.handler = controlapi.LoopbackHostOnly(controlapi.OwnOriginOnly(h))
	// Outermost, on every server of the port: another account's connection gets nothing else.
	m.guard = peer.NewGuard(peer.Options{Token: deps.token, TokenOnly: deps.tokenOnly, Name: "project", Logger: m.log})
	if ln != nil {
		m.serve(ln)
	}
	return m
}

// sessions counts the live MCP sessions on every transport: those that
// completed an initialize handshake. Short-lived protocol probes (such as
// a client's stateless server/discover) are not sessions.
func (m *mount) sessions() int {
	n := 0
	for ss := range m.mcp.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// url is the project's HTTP endpoint, or "" while it has no port.
func (m *mount) url() string {
	if p := m.portNow(); p > 0 {
		return fmt.Sprintf("http://127.0.0.1:%d/mcp", p)
	}
	return ""
}

// close stops serving, ends every session and releases the port.
func (m *mount) close(ctx context.Context) {
	m.stopIdle()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for ss := range m.mcp.Sessions() {
		ss.Close()
	}
	m.httpMu.Lock()
	srv, done := m.srv, m.done
	m.closed = true // no port is bound after this
	m.httpMu.Unlock()
	if srv != nil {
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-done
	}
	m.servers.close(ctx)
	if err := m.engine.Close(); err != nil {
		m.log.Warn("close engine", "err", err)
	}
}

func (m *mount) serveIndex(w http.ResponseWriter, _ *http.Request) {
	controlapi.WriteJSON(w, http.StatusOK, map[string]any{
		"project":   map[string]string{"id": m.id, "name": m.name, "root": m.root},
		"endpoints": endpoints(),
		"health":    "/health",
	})
}

// endpoints names each transport's path on a project port, for its index.
func endpoints() map[string]string {
	out := make(map[string]string)
	for _, tr := range transports {
		if tr.path != "" {
			out[tr.index] = tr.path
		}
	}
	return out
}
