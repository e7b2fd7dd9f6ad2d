package mounttable

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/finder"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/memtrim"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/broker/streamable"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mount is a project being served: its engine, the engine's MCP server
// (one for every transport) and the listener that holds its port. Its
// fields are set once as it is made (newMount; repo by Table.open), except
// the port's, under httpMu; its holders and grace timer live in its slot
// of the table, under the table's lock.
//
// The port may come later: with none free, the mount serves the IDE's
// sessions (the shim's route on the control API) and the broker binds one
// when it can (portretry.go).
type Mount struct {
	id, root, name string
	engine         *project.Engine
	ctx            context.Context // the broker's lifetime, for the port's requests
	handler        http.Handler    // the port's routes, served once it is bound
	mcp            *mcp.Server     // the engine's: every transport's sessions are its sessions
	shimHandler    http.Handler    // /projects/{id}/mcp on the control API
	guard          *peer.Guard     // the account check, installed on the port's server when it is bound
	startedAt      time.Time
	log            *slog.Logger
	sweep          *mcpserve.Sweep     // ends idle sessions, saves the others' activity
	observer       *mcpserve.Observer  // tool calls
	book           *mcpserve.Book      // each session's transport and activity
	limits         *mcpserve.Limits    // the session rule and mcp.max_tool_calls
	streamable     *streamable.Handler // /mcp's session table
	saved          *mcpserve.Store     // /mcp's sessions in berth.db
	servers        *mountServers       // hosted MCP servers (servers.go); nil when off
	finder         *finder.Finder      // finder mode, find_tools and call_tool
	repo           *repoView           // its git repository (repository.go); set by open
	stateMu        regLock             // serializes the writes of its state file (statefile.go)

	httpMu  leafLock // guards the port's fields, set once when it is bound
	port    int      // 0 while the mount has no port
	srv     *http.Server
	done    chan struct{} // closed when srv.Serve returns
	portErr error         // why the mount has no port yet
	closed  bool          // shut down: no port is bound any more

	// stopTrim ends the wait for the first index catch-up, after which
	// the broker's memory is trimmed; trimDone is closed once that
	// goroutine returns (trimOnceIndexed).
	stopTrim context.CancelFunc
	trimDone <-chan struct{}
}

type mountDeps struct {
	log            *slog.Logger
	db             *store.DB
	sessionTimeout time.Duration
	token          string // the bearer token: admits a request from any account; "" = none
	tokenOnly      bool   // no account check: only the token admits
	onCall         func(*Mount, api.ToolCall)
	servers        *mountServers                // installed on the engine's server; its middleware goes innermost
	onSession      func(m *Mount, event string) // an eviction, refusal or time-out
	budget         *peer.Budget                 // shared by every TCP listener; nil for none
	trim           *memtrim.Trimmer             // asked to trim once the index is built; nil for none
}

// newMount serves the engine's sessions and starts serving its port on ln
// (already bound), or with ln nil records portErr, why it has none.
func newMount(ctx context.Context, eng *project.Engine, id string, ln net.Listener, portErr error, deps mountDeps) *Mount {
	m := &Mount{
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
	addTestHold(m.mcp)
	m.newParts(deps)
	m.mcp.AddReceivingMiddleware(m.middleware()...)
	m.mcp.AddSendingMiddleware(m.finder.Sending)
	m.sweep = mcpserve.StartSweep(ctx, m.mcp, m.limits, m.saved)
	m.handler, m.shimHandler = m.routes(deps.sessionTimeout)
	// Outermost, on every server of the port: another account's connection gets nothing else.
	m.guard = peer.NewGuard(peer.Options{Token: deps.token, TokenOnly: deps.tokenOnly, Name: "project", Logger: m.log, Budget: deps.budget})
	if ln != nil {
		m.serve(ln)
	}
	m.trimOnceIndexed(deps.trim)
	return m
}

// trimOnceIndexed asks trim for a trim of the broker's memory once the
// engine's index has caught up for the first time: building it is the
// burst of garbage of a mount. The goroutine that waits is the mount's:
// shutdown ends it and waits for it.
func (m *Mount) trimOnceIndexed(trim *memtrim.Trimmer) {
	m.stopTrim, m.trimDone = afterReady(m.ctx, m.engine.WaitIndexReady, trim.Request)
}

// afterReady calls then, in a goroutine of its own, once ready returns
// nil; stop ends the wait (ready is given a context that stop cancels),
// and done is closed once the goroutine has returned.
func afterReady(ctx context.Context, ready func(context.Context) error, then func()) (stop context.CancelFunc, done <-chan struct{}) {
	ctx, stop = context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if ready(ctx) == nil {
			then()
		}
	}()
	return stop, finished
}

// newParts makes what serves the mount's sessions: the session book, the
// hosted servers and the finder, the limits, the saved sessions, /mcp's
// session table and the observer. None is installed on the server yet.
func (m *Mount) newParts(deps mountDeps) {
	m.book = mcpserve.NewBook(m.log)
	m.servers = deps.servers
	m.finder = newFinder(m.engine, m.id, deps.db, m.servers, m.log)
	cfg := m.engine.Config().MCP
	m.limits = mcpserve.NewLimits(m.name, cfg.MaxSessions, cfg.MaxToolCalls, deps.sessionTimeout, m.book)
	m.limits.End = m.endSession
	if deps.onSession != nil {
		m.limits.Counted = func(event string) { deps.onSession(m, event) }
	}
	m.saved = mcpserve.NewStore(deps.db, m.id, deps.sessionTimeout, m.log)
	m.saved.Prune(time.Now())
	m.streamable = streamable.New(m.mcp, streamable.Options{
		Logger:     m.log,
		EventStore: streamable.NewEventStore(),
		Restore:    m.saved.Restore,
		Connected:  m.connected,
		Refuse:     mcpserve.WriteBusy,
		Ended:      m.saved.Forget,
		Track:      m.book.TrackHTTP(),
	})
	var onCall func(api.ToolCall)
	if deps.onCall != nil {
		onCall = func(c api.ToolCall) { deps.onCall(m, c) }
	}
	m.observer = mcpserve.NewObserver(m.log, onCall)
}

// middleware is the chain every request to the mount's server goes
// through, outermost first; the engine's own middleware is inside it.
func (m *Mount) middleware() []mcp.Middleware {
	chain := []mcp.Middleware{
		// /mcp's fast path runs a tools/call through all below
		// (broker/streamable/fast.go).
		m.streamable.Middleware,
		// Two messages handled at once widen the broker to every
		// processor (procs).
		mcpserve.CountWork,
		// The request's goroutine gets its stack before it goes deep.
		mcpserve.PresizeStack,
		// A session is tagged at its first request, whatever follows.
		m.book.Middleware,
		// It sees every call, those refused below included.
		m.observer.Middleware,
		// It saves what the limits admitted.
		m.saved.Middleware,
		// A batch's request takes its place when its turn comes.
		m.streamable.Batches,
		// mcp.max_sessions and mcp.max_tool_calls.
		m.limits.Middleware,
		// A call_tool reaches a hosted tool as a direct call does.
		m.finder.Middleware,
	}
	if m.servers != nil {
		// Innermost: starting a lazy server counts against a call's
		// slot, and its failures are the call's.
		chain = append(chain, m.servers.hp.Middleware())
	}
	return chain
}

// routes are the port's handler (every transport's path, the index and
// /health, behind the session refusal and the browser checks) and the
// shim's route on the control API.
func (m *Mount) routes(sessionTimeout time.Duration) (port, shim http.Handler) {
	byPath, shim := mcpserve.Handlers(m.mcp, mcpserve.HandlerDeps{
		StreamOpts: &mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout, Logger: m.log},
		Streamable: m.streamable, Book: m.book, Log: m.log,
	})
	mux := http.NewServeMux()
	for path, h := range byPath {
		mux.Handle(path, h)
	}
	mux.HandleFunc("/{$}", m.serveIndex)
	mux.HandleFunc("GET /health", m.serveHealth)
	h := m.limits.RefuseSessions(mcpserve.CheckPosts(mux, mcpserve.ReadTimeout))
	return controlapi.LoopbackHostOnly(controlapi.OwnOriginOnly(h)), shim
}

// connected is the streamable handler's word of a session as it connects:
// it is tagged, and a session restored after a restart takes a place as an
// initialize would.
func (m *Mount) connected(_ *http.Request, ss *mcp.ServerSession, restored bool) error {
	m.book.ConnectedHTTP(ss, restored)
	if !restored {
		return nil
	}
	if err := m.limits.Admit(ss); err != nil {
		return err
	}
	m.limits.Counted(metrics.SessionRestored)
	return nil
}

// endSession ends ss for good: a streamable HTTP session leaves the table
// first, so that its next request gets 404, and is deleted from berth.db.
func (m *Mount) endSession(ss *mcp.ServerSession) {
	if m.book.Transport(ss) == mcpserve.TransportHTTP && ss.ID() != "" && m.streamable.Close(ss.ID()) {
		return
	}
	ss.Close()
}

// url is the project's HTTP endpoint, or "" while it has no port.
func (m *Mount) url() string {
	if p := m.portNow(); p > 0 {
		return fmt.Sprintf("http://127.0.0.1:%d/mcp", p)
	}
	return ""
}

// shutdown stops serving, ends every session, releases the port and
// closes the engine; it returns once every goroutine of the mount has.
// Its steps run in this order, each named: one that holds the shutdown up
// is named in the log (closeSteps).
func (m *Mount) shutdown(ctx context.Context) {
	steps := startClose(m.log)
	defer steps.done()
	steps.run("the memory trim", func() { m.stopTrim(); <-m.trimDone })
	// A sweep in progress ends its sessions and saves before the final save below.
	steps.run("the idle sweep", m.sweep.Stop)
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	// Streamable HTTP sessions stay saved: a broker that serves the
	// project again restores them.
	steps.run("saving the sessions", func() { m.saved.Touch(m.book, time.Now(), true); m.saved.Flush() })
	steps.run("the streamable HTTP sessions", m.streamable.Shutdown)
	steps.run("the other sessions", func() {
		for ss := range m.mcp.Sessions() {
			ss.Close()
		}
	})
	steps.run("the port", func() {
		m.httpMu.Lock()
		srv, done := m.srv, m.done
		m.closed = true // no port is bound after this
		m.httpMu.Unlock()
		if srv == nil {
			return
		}
		// Every session is closed: what still runs is a stream that will
		// not end by itself, cut after a short wait.
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-done
	})
	steps.run("the sessions' watchers", func() { m.book.Wait(ctx) })
	// The hosted servers get their own bound: a stream that held the
	// listener's shutdown must not leave them an expired one.
	steps.run("the hosted servers", func() {
		sctx, scancel := context.WithTimeout(outer, 3*time.Second)
		defer scancel()
		m.servers.release(sctx)
	})
	steps.run("the tool finder", m.finder.Close)
	steps.run("the engine", func() {
		if err := m.engine.Close(); err != nil {
			m.log.Warn("close engine", "err", err)
		}
	})
}

func (m *Mount) serveIndex(w http.ResponseWriter, _ *http.Request) {
	controlapi.WriteJSON(w, http.StatusOK, map[string]any{
		"project":   map[string]string{"id": m.id, "name": m.name, "root": m.root},
		"endpoints": mcpserve.Endpoints(),
		"health":    "/health",
	})
}

// ID is the project's id (api.ProjectID of its root).
func (m *Mount) ID() string { return m.id }

// Engine is the project's engine.
func (m *Mount) Engine() *project.Engine { return m.engine }

// RecentCalls is the mount's last tool calls, newest last, for the dashboard.
func (m *Mount) RecentCalls() []api.ToolCall { return m.observer.Recent() }

// SessionCounts is the mount's MCP sessions, counted as /projects shows them.
func (m *Mount) SessionCounts() mcpserve.Counts { return m.book.Count(m.mcp) }

// RepositoryID is the id of the git repository the project is a confirmed
// worktree of, "" for none.
func (m *Mount) RepositoryID() string {
	if m.repo == nil {
		return ""
	}
	return m.repo.id.ID
}

// Servers is the mount's hosted servers as they run, for `berth servers`
// and the dashboard (Declared left for the caller, who knows the broker's
// config file).
func (m *Mount) Servers() api.ProjectServers {
	ps := api.ProjectServers{ID: m.id, Name: m.name, Root: m.root, Mounted: true, Servers: []api.ServerStatus{}}
	if st := m.HostedStatus(); st != nil {
		ps.Servers = st
	}
	return ps
}

// Clients lists the mount's sessions, oldest first, as `berth clients`,
// GET /projects/{id}/sessions and the dashboard show them.
func (m *Mount) Clients() []api.Session {
	return m.book.Clients(m.mcp, m.saved)
}

// CloseClient ends the session called sid; false when there is none.
func (m *Mount) CloseClient(sid string) bool {
	ss := m.book.Find(sid)
	if ss == nil {
		return false
	}
	m.log.Info("MCP session closed on request", "session", sid)
	m.endSession(ss)
	return true
}
