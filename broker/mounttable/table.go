package mounttable

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/memtrim"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/gitrepo"
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

// slot is a mount's place in the table. While mounting, m is nil and
// ready is open; attaches of the same root wait on ready instead of
// mounting twice.
type slot struct {
	m       *Mount
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

// Table is the broker's table of mounted projects. mu guards every slot's
// fields; it is never held while a mount opens, closes or is described,
// nor while a state file is written (the lock order is in the package
// doc).
type Table struct {
	ctx       context.Context // the broker's lifetime
	cfg       brokerconfig.Config
	db        *store.DB
	log       *slog.Logger
	info      project.ServerInfo
	token     string
	onEmpty   func(empty bool) // idle tracking: called with the table's emptiness after changes
	logs      *logring.Ring    // handed to each engine for get_recent_logs
	onCall    func(*Mount, api.ToolCall)
	onSession func(m *Mount, event string) // each session a mount evicts, refuses or times out
	schemas   *mcp.SchemaCache             // the tools' JSON schemas, inferred once for every mount
	lambdas   workflow.Lambdas             // runs the workflow gates' lambdas in a child process
	// hosted is the broker's hosted MCP servers: the pool, the approvals
	// (servers.go); a mount's share of them is Mount.hosted.
	hosted      *HostedServers
	watch       *watch.Hub       // one inotify instance for every mount's file watching
	sharedIndex SharedIndexFunc  // the search content each repository's worktrees share; nil: none
	budget      *peer.Budget     // connections not yet known to be the owner's, every TCP listener's
	trim        *memtrim.Trimmer // returns a mount's garbage to the system once its index is built

	mu           tableLock
	slots        map[string]*slot
	shuttingDown bool // no attach is taken any more
	// closing holds the ids whose mount is out of the table but still
	// closing (closing.go).
	closing map[string]chan struct{}

	regMu regLock // serializes registry writes (remember.go); taken before mu
}

// SharedIndexFunc returns the search content index the project of a
// repository shares with its sibling worktrees, nil for one of its own.
type SharedIndexFunc func(repo gitrepo.Identity, embedded bool, log *slog.Logger) *search.Shared

// Deps are what the table is made of: the broker's lifetime, settings and
// store, and its hooks.
type Deps struct {
	Ctx     context.Context // the broker's lifetime: every mount's, the hosted servers' and the trimmer's
	Config  brokerconfig.Config
	DB      *store.DB
	Log     *slog.Logger
	Logs    *logring.Ring // the broker's recent logs, each engine's get_recent_logs
	Info    project.ServerInfo
	Token   string       // the bearer token the projects' ports admit; "" for none
	Budget  *peer.Budget // connections not yet known to be the owner's, every TCP listener's
	Watch   *watch.Hub   // file watching, shared by every mount; the caller closes it after CloseAll
	Lambdas workflow.Lambdas
	// SharedIndex gives a worktree the content index of its repository;
	// nil: every project keeps its own.
	SharedIndex SharedIndexFunc
	// OnEmpty is told whether the table is empty after each change, with
	// the table's lock held: it may take only a leaf lock (rankLeaf).
	OnEmpty func(empty bool)
	// OnCall is told of every tool call of every mount.
	OnCall func(*Mount, api.ToolCall)
	// OnSession is told of each session a mount evicts, refuses or times out.
	OnSession func(m *Mount, event string)
	// OnChange is told when a mount's hosted servers may have changed.
	OnChange func()
}

// New makes the table, empty; its hosted servers' pool and its memory
// trimmer live until CloseAll or until d.Ctx ends.
func New(d Deps) *Table {
	return &Table{
		ctx: d.Ctx, cfg: d.Config, db: d.DB, log: d.Log, info: d.Info, token: d.Token,
		onEmpty: d.OnEmpty, logs: d.Logs, onCall: d.OnCall, onSession: d.OnSession,
		schemas:     mcp.NewSchemaCache(),
		lambdas:     d.Lambdas,
		hosted:      newHostedServers(d.Config, d.DB, d.Log, d.Logs, d.OnChange),
		watch:       d.Watch,
		sharedIndex: d.SharedIndex,
		budget:      d.Budget,
		trim:        memtrim.New(d.Ctx, trimGap),
		slots:       make(map[string]*slot),
	}
}

// Hosted is the broker's hosted MCP servers: the pool every mount shares
// and the approvals.
func (table *Table) Hosted() *HostedServers { return table.hosted }

// trimGap is the least time between two trims of the broker's memory (each
// a full collection) while projects mount one after another.
const trimGap = time.Second

// open mounts the project (or the folder in no project): engine, port,
// servers.
func (table *Table) open(root, id string, folder bool) (*Mount, error) {
	repo := newRepoView(root, table.log.With("project", id))
	eng, err := project.Open(table.ctx, project.Options{Root: root, ID: id, DB: table.db, Logger: table.log, Server: table.info, Logs: table.logs, Folder: folder,
		Transports: mcpserve.TransportNames(), TransportOf: mcpserve.TransportName, Schemas: table.schemas, AllowOutside: table.cfg.AllowOutside, Watch: table.watch, Lambdas: table.lambdas,
		Embedder: table.cfg.Embedder(), Endpoint: func() project.Endpoint { return table.endpoint(id) }, Repository: table.workflowRepository(id, root, repo),
		SharedIndex: table.sharedIndexOf(repo.id), Git: repo.id})
	if config.IsError(err) {
		return nil, api.Errorf(http.StatusBadRequest, api.CodeBadConfig, "%v (the project is not served until this is fixed)", err)
	}
	if err != nil {
		return nil, api.Errorf(http.StatusBadRequest, api.CodeProjectBroken, "open project %s: %v", root, err)
	}
	// Without a free port the project is served to the IDE alone, and
	// the broker binds one later (portretry.go).
	ln, portErr := table.bindFor(id, root, eng.Config().MCP.HTTPPort)
	srvs := table.hosted.openServers(table.ctx, id, eng, table.log, repo.id)
	m := newMount(table.ctx, eng, id, ln, portErr, mountDeps{log: table.log, db: table.db, sessionTimeout: table.cfg.SessionTimeout, token: table.token, tokenOnly: table.cfg.TokenOnly, onCall: table.onCall, onSession: table.onSession, servers: srvs, budget: table.budget, trim: table.trim})
	m.repo = repo
	if portErr != nil {
		eng.Logger().Warn("mounted without a port: the IDE's tools work, sub-agents cannot reach the project until a port is free", "err", portErr)
	}
	table.log.Info("mounted", "project", id, "root", root, "kind", m.kind(), "port", m.portNow())
	return m, nil
}

// detach releases one lease, or with lease "" the `berth attach` pin.
func (table *Table) Detach(id, lease string) error {
	table.mu.Lock()
	sl, ok := table.slots[id]
	if !ok || sl.m == nil {
		table.mu.Unlock()
		return api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	if lease == "" {
		for l, h := range sl.holders {
			if h.kind == api.HolderCLI {
				delete(sl.holders, l)
			}
		}
		sl.pinned = false
	} else {
		if _, ok := sl.holders[lease]; !ok {
			table.mu.Unlock()
			return api.Errorf(http.StatusNotFound, api.CodeLeaseNotHeld, "lease %s is not held on project %s (already detached?)", lease, id)
		}
		delete(sl.holders, lease)
	}
	table.releaseLocked(id, sl)
	table.mu.Unlock()
	if lease == "" {
		table.remember(sl, true)
	}
	_ = table.publish(id, sl) // a failure is logged; the detach is done
	return nil
}

// releaseLocked starts the grace timer when nobody holds sl any more.
func (table *Table) releaseLocked(id string, sl *slot) {
	if len(sl.holders) > 0 || sl.grace != nil || table.shuttingDown {
		return
	}
	sl.grace = time.AfterFunc(table.cfg.MountGrace, func() { table.expire(id, sl) })
}

// expire unmounts sl if it is still unheld when its grace period ends and
// its sessions are quiet (mcpserve.Book.HoldFor); while they are not, the grace is
// asked again when it could end.
func (table *Table) expire(id string, sl *slot) {
	wait := sl.m.book.HoldFor(sl.m.mcp, time.Now(), table.cfg.MountGrace)
	table.mu.Lock()
	if table.slots[id] != sl || len(sl.holders) > 0 || sl.grace == nil || table.shuttingDown {
		table.mu.Unlock()
		return
	}
	if wait > 0 {
		sl.grace = time.AfterFunc(wait, func() { table.expire(id, sl) })
		table.mu.Unlock()
		sl.m.log.Debug("no holder left, but a session is in use: the project stays mounted", "again_in", wait.Round(time.Millisecond))
		return
	}
	out := table.takeOutLocked(id, sl)
	table.mu.Unlock()
	table.unmountTaken(context.Background(), "grace period over", out)
}

// takenOut is a mount taken out of the table (takeOutLocked) and not yet
// unmounted: a lookup of its id waits until closed is called.
type takenOut struct {
	id     string
	m      *Mount
	closed func()
}

// takeOutLocked removes sl, id's slot, from the table, its grace timer
// stopped. Deleting the slot, then unmounting its mount (unmountTaken,
// once table.mu is released) is the one way a mount leaves the table.
func (table *Table) takeOutLocked(id string, sl *slot) takenOut {
	if sl.grace != nil {
		sl.grace.Stop()
	}
	delete(table.slots, id)
	table.changedLocked()
	return takenOut{id: id, m: sl.m, closed: table.beginClosingLocked(id)}
}

// unmountTaken unmounts the mounts taken out of the table, at once and
// each bounded by ctx, then records their release in one registry write.
func (table *Table) unmountTaken(ctx context.Context, why string, taken ...takenOut) {
	var wg sync.WaitGroup
	ids := make([]string, len(taken))
	for i, out := range taken {
		ids[i] = out.id
		wg.Go(func() {
			table.unmount(ctx, out.m, why)
			out.closed()
		})
	}
	wg.Wait()
	table.released(ids...)
}

// unmount stops advertising the mount (its state file goes first), then
// shuts it down: its sessions end, its port is released.
func (table *Table) unmount(ctx context.Context, m *Mount, why string) {
	table.unpublish(m)
	m.shutdown(ctx)
	table.log.Info("unmounted", "project", m.id, "port", m.portNow(), "why", why)
}

// reap releases shim leases whose process has died.
func (table *Table) reap(alive func(pid int) bool) {
	type lease struct{ id, lease string }
	var check []lease
	pids := map[string]int{}
	table.mu.Lock()
	for id, sl := range table.slots {
		for l, h := range sl.holders {
			if h.kind == api.HolderShim && h.pid > 0 {
				check = append(check, lease{id, l})
				pids[l] = h.pid
			}
		}
	}
	table.mu.Unlock()
	for _, c := range check {
		if alive(pids[c.lease]) {
			continue
		}
		table.log.Info("holder died; releasing", "project", c.id, "pid", pids[c.lease])
		_ = table.Detach(c.id, c.lease)
	}
}

// closeIfUnheld closes the table to new attaches and returns 0 when no
// mount has a holder other than except; else it returns how many others
// there are and changes nothing.
func (table *Table) CloseIfUnheld(except string) int {
	table.mu.Lock()
	defer table.mu.Unlock()
	n := 0
	for _, sl := range table.slots {
		for l := range sl.holders {
			if l != except {
				n++
			}
		}
	}
	if n == 0 {
		table.shuttingDown = true
	}
	return n
}

// CloseAll unmounts everything and waits for the closes already under
// way, then stops the hosted servers the mounts left running and the
// memory trimmer (broker shutdown), bounded by ctx.
// The table takes no attach after it.
func (table *Table) CloseAll(ctx context.Context) {
	table.mu.Lock()
	table.shuttingDown = true
	var taken []takenOut
	for id, sl := range table.slots {
		if sl.m == nil {
			// Still mounting: the attach that mounts it sees the table
			// shutting down and unmounts it (mountSlot).
			delete(table.slots, id)
			continue
		}
		taken = append(taken, table.takeOutLocked(id, sl))
	}
	closing := make([]chan struct{}, 0, len(table.closing))
	for _, done := range table.closing {
		closing = append(closing, done)
	}
	table.mu.Unlock()
	table.unmountTaken(ctx, "broker stopping", taken...)
	for _, done := range closing { // mounts closed before: a dropped root's, an expired grace's
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	table.hosted.stop(ctx)
	table.trim.Close() // a mount still being made may ask for a trim: ignored
}

func (table *Table) List() []api.Project {
	type row struct {
		id   string
		m    *Mount
		held held
	}
	table.mu.Lock()
	rows := make([]row, 0, len(table.slots))
	for id, sl := range table.slots {
		if sl.m != nil {
			rows = append(rows, row{id, sl.m, sl.heldLocked()})
		}
	}
	table.mu.Unlock()
	out := make([]api.Project, len(rows))
	for i, r := range rows {
		out[i] = describe(r.id, r.m, r.held)
		out[i].Repository = r.m.repo.describe()
	}
	slices.SortFunc(out, func(a, b api.Project) int { return strings.Compare(a.Root, b.Root) })
	return out
}

func (table *Table) Get(id string) (*Mount, api.Project, error) {
	table.awaitClosed(table.ctx, id)
	table.mu.Lock()
	sl, ok := table.slots[id]
	if !ok || sl.m == nil {
		table.mu.Unlock()
		return nil, api.Project{}, api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	h := sl.heldLocked()
	table.mu.Unlock()
	p := describe(id, sl.m, h)
	p.Repository = sl.m.repo.describe()
	return sl.m, p, nil
}

func (table *Table) Count() int {
	table.mu.Lock()
	defer table.mu.Unlock()
	return len(table.slots)
}

// held is what the table records of a mount, for describe: copied out
// under table.mu, so that describe takes the mount's own locks without it.
type held struct {
	holders   int
	pinned    bool
	published string // the transport the state file says
	stateErr  string // why the state file could not be written
}

func (sl *slot) heldLocked() held {
	return held{holders: len(sl.holders), pinned: sl.pinned, published: sl.published, stateErr: sl.stateErr}
}

// describe is the project of mount m as the control API shows it,
// without its repository. The caller does not hold table.mu.
func describe(id string, m *Mount, h held) api.Project {
	sessions := m.book.Count(m.mcp)
	return api.Project{
		SessionsLive: sessions.Live, SessionsIdle: sessions.Idle,
		ID: id, Name: m.name, Root: m.root, Kind: m.kind(), Port: m.portNow(), URL: m.url(),
		Sessions: sessions.Live + sessions.Idle, SessionsByTransport: sessions.ByTransport, Holders: h.holders, Pinned: h.pinned, StartedAt: m.startedAt.UTC(),
		Transport: h.published, Index: indexState(m), Missing: missing(m, h.stateErr),
	}
}

// indexState is the mount's search index in short; nil when rag is off.
func indexState(m *Mount) *api.IndexState {
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

func (table *Table) changedLocked() {
	if table.onEmpty != nil {
		table.onEmpty(len(table.slots) == 0)
	}
}

// newLease is a new holder's lease: opaque, and not to be guessed.
func newLease() string { return rand.Text() }

// sharedIndexOf is the content index the project of repo shares with its
// sibling worktrees; nil when it keeps its own.
func (table *Table) sharedIndexOf(repo gitrepo.Identity) *search.Shared {
	if table.sharedIndex == nil {
		return nil
	}
	return table.sharedIndex(repo, table.cfg.Embedder() != nil, table.log)
}

// All returns the mounts that are up.
func (table *Table) All() []*Mount {
	table.mu.Lock()
	defer table.mu.Unlock()
	out := make([]*Mount, 0, len(table.slots))
	for _, sl := range table.slots {
		if sl.m != nil {
			out = append(out, sl.m)
		}
	}
	return out
}
