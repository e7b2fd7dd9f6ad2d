package broker

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/memtrim"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holder is one reason a mount stays up: a shim (until it detaches or its
// pid dies) or a `berth attach` pin.
type holder struct {
	kind      string
	pid       int
	transport string // what it asked for: api.TransportDual, TransportStdio or TransportHTTP
}

// entry is a mount's slot in the table. While mounting, m is nil and ready
// is open; attaches of the same root wait on ready instead of mounting twice.
type entry struct {
	m       *mount
	ready   chan struct{}
	err     error
	holders map[string]holder // lease -> holder
	pinned  bool
	grace   *time.Timer // running while nobody holds the mount
	// published is the transport the state file says, as last written
	// ("" before the first write or after a failed one).
	published string
	// stateErr says why the state file could not be written, with the
	// fix; "" once it was (statefile.go, portretry.go).
	stateErr string
}

// mounts is the broker's table of projects. mu guards every entry's
// fields; it is never held while a mount opens, closes or is described,
// nor while a state file is written. Lock order (the package doc): regMu
// or a mount's stateMu, then mu, then a mount's httpMu.
type mounts struct {
	ctx     context.Context // the broker's lifetime
	cfg     brokerconfig.Config
	db      *store.DB
	log     *slog.Logger
	info    project.ServerInfo
	token   string
	onEmpty func(empty bool) // idle tracking: called with the table's emptiness after changes
	logs    *logring.Ring    // handed to each engine for get_recent_logs
	onCall  func(*mount, api.ToolCall)
	// onSession is told of each session a mount evicts, refuses or times out.
	onSession     func(m *mount, event string)
	schemas       *mcp.SchemaCache // the tools' JSON schemas, inferred once for every mount
	lambdas       workflow.Lambdas // runs the workflow gates' lambdas in a child process
	hostedServers *serverDeps      // the broker's hosted MCP servers: the pool, the approvals (servers.go); a mount's view of them is mount.servers
	watch         *watch.Hub       // one inotify instance for every mount's file watching
	indexes       contentIndexes   // the search content each repository's worktrees share
	budget        *peer.Budget     // connections not yet known to be the owner's, every TCP listener's
	trim          *memtrim.Trimmer // returns a mount's garbage to the system once its index is built

	mu      tableLock
	entries map[string]*entry
	closed  bool
	// closing holds the ids whose mount is out of the table but still
	// closing (closing.go).
	closing map[string]chan struct{}

	regMu regLock // serializes registry writes (remember.go); taken before mu
}

// trimGap is the least time between two trims of the broker's memory (each
// a full collection) while projects mount one after another.
const trimGap = time.Second

// open mounts the project (or the folder in no project): engine, port,
// servers.
func (t *mounts) open(root, id string, folder bool) (*mount, error) {
	repo := newRepoView(root, t.log.With("project", id))
	eng, err := project.Open(t.ctx, project.Options{Root: root, ID: id, DB: t.db, Logger: t.log, Server: t.info, Logs: t.logs, Folder: folder,
		Transports: mcpserve.TransportNames(), TransportOf: mcpserve.TransportName, Schemas: t.schemas, AllowOutside: t.cfg.AllowOutside, Watch: t.watch, Lambdas: t.lambdas,
		Embedder: t.cfg.Embedder(), Endpoint: func() project.Endpoint { return t.endpoint(id) }, Repository: t.workflowRepository(id, root, repo),
		SharedIndex: t.indexes.of(repo.id, t.cfg.Embedder() != nil, t.log)})
	if config.IsError(err) {
		return nil, api.Errorf(http.StatusBadRequest, api.CodeBadConfig, "%v (the project is not served until this is fixed)", err)
	}
	if err != nil {
		return nil, api.Errorf(http.StatusBadRequest, api.CodeProjectBroken, "open project %s: %v", root, err)
	}
	// Without a free port the project is served to the IDE alone, and
	// the broker binds one later (portretry.go).
	ln, portErr := t.bindFor(id, root, eng.Config().MCP.HTTPPort)
	srvs := t.hostedServers.openServers(t.ctx, id, eng, t.log, repo.id)
	m := newMount(t.ctx, eng, id, ln, portErr, mountDeps{log: t.log, db: t.db, sessionTimeout: t.cfg.SessionTimeout, token: t.token, tokenOnly: t.cfg.TokenOnly, onCall: t.onCall, onSession: t.onSession, servers: srvs, budget: t.budget})
	m.repo = repo
	if portErr != nil {
		eng.Logger().Warn("mounted without a port: the IDE's tools work, sub-agents cannot reach the project until a port is free", "err", portErr)
	}
	t.log.Info("mounted", "project", id, "root", root, "kind", m.kind(), "port", m.portNow())
	go func() {
		if eng.WaitIndexReady(t.ctx) == nil {
			t.trim.Request()
		}
	}()
	return m, nil
}

// detach releases one lease, or with lease "" the `berth attach` pin.
func (t *mounts) detach(id, lease string) error {
	t.mu.Lock()
	e, ok := t.entries[id]
	if !ok || e.m == nil {
		t.mu.Unlock()
		return api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	if lease == "" {
		for l, h := range e.holders {
			if h.kind == api.HolderCLI {
				delete(e.holders, l)
			}
		}
		e.pinned = false
	} else {
		if _, ok := e.holders[lease]; !ok {
			t.mu.Unlock()
			return api.Errorf(http.StatusNotFound, api.CodeLeaseNotHeld, "lease %s is not held on project %s (already detached?)", lease, id)
		}
		delete(e.holders, lease)
	}
	t.releaseLocked(id, e)
	t.mu.Unlock()
	if lease == "" {
		t.remember(e, true)
	}
	_ = t.publish(id, e) // a failure is logged; the detach is done
	return nil
}

// releaseLocked starts the grace timer when nobody holds e any more.
func (t *mounts) releaseLocked(id string, e *entry) {
	if len(e.holders) > 0 || e.grace != nil || t.closed {
		return
	}
	e.grace = time.AfterFunc(t.cfg.MountGrace, func() { t.expire(id, e) })
}

// expire unmounts e if it is still unheld when its grace period ends and
// its sessions are quiet (mcpserve.Book.HoldFor); while they are not, the grace is
// asked again when it could end.
func (t *mounts) expire(id string, e *entry) {
	wait := e.m.book.HoldFor(e.m.mcp, time.Now(), t.cfg.MountGrace)
	t.mu.Lock()
	if t.entries[id] != e || len(e.holders) > 0 || e.grace == nil || t.closed {
		t.mu.Unlock()
		return
	}
	if wait > 0 {
		e.grace = time.AfterFunc(wait, func() { t.expire(id, e) })
		t.mu.Unlock()
		e.m.log.Debug("no holder left, but a session is in use: the project stays mounted", "again_in", wait.Round(time.Millisecond))
		return
	}
	delete(t.entries, id)
	closed := t.beginClosingLocked(id)
	t.changedLocked()
	t.mu.Unlock()
	t.unmount(context.Background(), e.m, "grace period over")
	closed()
	t.released(id)
}

// unmount stops advertising the mount (its state file goes first), then
// ends its sessions and releases its port.
func (t *mounts) unmount(ctx context.Context, m *mount, why string) {
	t.unpublish(m)
	m.close(ctx)
	t.log.Info("unmounted", "project", m.id, "port", m.portNow(), "why", why)
}

// reap releases shim leases whose process has died.
func (t *mounts) reap(alive func(pid int) bool) {
	type lease struct{ id, lease string }
	var check []lease
	pids := map[string]int{}
	t.mu.Lock()
	for id, e := range t.entries {
		for l, h := range e.holders {
			if h.kind == api.HolderShim && h.pid > 0 {
				check = append(check, lease{id, l})
				pids[l] = h.pid
			}
		}
	}
	t.mu.Unlock()
	for _, c := range check {
		if alive(pids[c.lease]) {
			continue
		}
		t.log.Info("holder died; releasing", "project", c.id, "pid", pids[c.lease])
		_ = t.detach(c.id, c.lease)
	}
}

// closeIfUnheld closes the table to new attaches and returns 0 when no
// mount has a holder other than except; else it returns how many others
// there are and changes nothing.
func (t *mounts) closeIfUnheld(except string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, e := range t.entries {
		for l := range e.holders {
			if l != except {
				n++
			}
		}
	}
	if n == 0 {
		t.closed = true
	}
	return n
}

// closeAll unmounts everything (broker shutdown), bounded by ctx.
func (t *mounts) closeAll(ctx context.Context) {
	t.mu.Lock()
	t.closed = true
	var ms []*mount
	var ids []string
	for id, e := range t.entries {
		if e.grace != nil {
			e.grace.Stop()
		}
		if e.m != nil {
			ms = append(ms, e.m)
			ids = append(ids, id)
		}
		delete(t.entries, id)
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.unmount(ctx, m, "broker stopping")
		}()
	}
	wg.Wait()
	t.released(ids...)
}

func (t *mounts) list() []api.Project {
	type row struct {
		id   string
		m    *mount
		held held
	}
	t.mu.Lock()
	rows := make([]row, 0, len(t.entries))
	for id, e := range t.entries {
		if e.m != nil {
			rows = append(rows, row{id, e.m, e.heldLocked()})
		}
	}
	t.mu.Unlock()
	out := make([]api.Project, len(rows))
	for i, r := range rows {
		out[i] = describe(r.id, r.m, r.held)
		out[i].Repository = r.m.repo.describe()
	}
	sortProjects(out)
	return out
}

func (t *mounts) get(id string) (*mount, api.Project, error) {
	t.awaitClosed(t.ctx, id)
	t.mu.Lock()
	e, ok := t.entries[id]
	if !ok || e.m == nil {
		t.mu.Unlock()
		return nil, api.Project{}, api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	h := e.heldLocked()
	t.mu.Unlock()
	p := describe(id, e.m, h)
	p.Repository = e.m.repo.describe()
	return e.m, p, nil
}

func (t *mounts) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// held is what the table records of a mount, for describe: copied out
// under t.mu, so that describe takes the mount's own locks without it.
type held struct {
	holders   int
	pinned    bool
	published string // the transport the state file says
	stateErr  string // why the state file could not be written
}

func (e *entry) heldLocked() held {
	return held{holders: len(e.holders), pinned: e.pinned, published: e.published, stateErr: e.stateErr}
}

// describe is the project of mount m as the control API shows it,
// without its repository. The caller does not hold t.mu.
func describe(id string, m *mount, h held) api.Project {
	sessions := m.book.Count(m.mcp)
	return api.Project{
		SessionsLive: sessions.Live, SessionsIdle: sessions.Idle,
		ID: id, Name: m.name, Root: m.root, Kind: m.kind(), Port: m.portNow(), URL: m.url(),
		Sessions: sessions.Live + sessions.Idle, SessionsByTransport: sessions.ByTransport, Holders: h.holders, Pinned: h.pinned, StartedAt: m.startedAt.UTC(),
		Transport: h.published, Index: indexState(m), Missing: missing(m, h.stateErr),
	}
}

// indexState is the mount's search index in short; nil when rag is off.
func indexState(m *mount) *api.IndexState {
	st, ok := m.engine.IndexStatus()
	if !ok {
		return nil
	}
	is := &api.IndexState{State: st.State, Files: st.Files, Sections: st.Chunks, LastError: st.LastError}
	if st.State != search.StateReady {
		is.Done, is.Total = st.Progress.Done, st.Progress.Total
	}
	return is
}

func (t *mounts) changedLocked() {
	if t.onEmpty != nil {
		t.onEmpty(len(t.entries) == 0)
	}
}

func newLease() string { return randomHex(12) }
