package hosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Decl is one declared server: from the project's config (OriginProject,
// runs once approved) or from the broker's (OriginUser, trusted). Server
// must have passed config.ValidateServers.
type Decl struct {
	Name   string
	Server config.Server
	Origin Origin
}

// ApprovalChecker says whether a project-declared server may run;
// [Approvals] is the one backed by berth.db.
type ApprovalChecker interface {
	Check(projectID, name string, s config.Server) (Approval, error)
}

// ProjectSpec names the project a [Project] serves.
type ProjectSpec struct {
	ID   string       // the project's id (store and registry key)
	Name string       // its display name (the name of its root in roots/list)
	Root string       // its resolved root: the default cwd and the root servers are told
	Log  *slog.Logger // the mount's logger (with its project attribute)
	// Approvals decides project-declared servers; nil means none is approved.
	Approvals ApprovalChecker
	// Echo, when set, also gets the stderr lines of the share: user
	// servers the project holds (they are logged to Options.Log without
	// a project): a logger that keeps records for the project's recent
	// logs without writing them to the broker's log again.
	Echo *slog.Logger
	// OnLog, when set, gets the notifications/message of the servers the
	// project holds, for its sessions.
	OnLog LogRelay
}

// Project is the hosted servers of one mounted project: the leases on
// their processes and the namespaced surface it installs on the project's
// MCP servers. See the package doc for how a mount uses it.
type Project struct {
	pool *Pool
	spec ProjectSpec

	updMu sync.Mutex // serializes Update and Close; taken before mu

	// mu guards entries, servers and onChange. It is held while the hosted
	// tools are added to or removed from an *mcp.Server (lock order: mu,
	// then the SDK server's own lock) and never while a process starts or
	// stops.
	mu      sync.Mutex
	entries map[string]*entry
	tools   map[string]bool // the hosted tool names of the last surface
	// resources and templates map the URIs and URI templates of the last
	// surface to the server that serves them (resources/subscribe).
	resources, templates map[string]*target
	servers              map[*mcp.Server]*installed
	onChange             []func()
	closed               bool

	// listed is set once a session has listed what the project offers:
	// from then on a lazy server that Update adds starts at once, so that
	// sessions which already listed hear of its tools (list_changed).
	listed atomic.Bool

	changed chan struct{} // cap 1: an upstream changed state or lists
	stopc   chan struct{}
	done    chan struct{}
}

// entry is one declared server in this project.
type entry struct {
	decl   Decl
	state  State // for a server that does not run: disabled, needs approval, conflict
	note   string
	fix    string
	lease  *lease // nil when it does not run
	unsub  func()
	target *target
	served int // tools served after the allow/deny list, at the last sync
}

func (e *entry) runs() bool { return e.lease != nil }

// Open starts serving decls for the project: eager servers start now, lazy
// ones on first use. Close it when the mount ends.
func (p *Pool) Open(ctx context.Context, spec ProjectSpec, decls []Decl) (*Project, error) {
	if spec.Log == nil {
		spec.Log = p.opts.Log.With("project", spec.ID)
	}
	hp := &Project{
		pool: p, spec: spec,
		entries: map[string]*entry{}, servers: map[*mcp.Server]*installed{},
		changed: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{}),
	}
	go hp.watch()
	if err := hp.Update(ctx, decls); err != nil {
		hp.Close(ctx)
		return nil, err
	}
	return hp, nil
}

// Update makes the project serve decls: after a config reload or an
// approval. A server whose definition did not change keeps its process;
// removed, changed or withdrawn ones stop (when no other project holds
// them). Installed MCP servers are updated before it returns.
func (p *Project) Update(ctx context.Context, decls []Decl) error {
	p.updMu.Lock()
	defer p.updMu.Unlock()
	next := p.plan(decls)
	var err error
	for _, name := range sortedKeys(next) {
		e := next[name]
		if e.state != "" {
			continue
		}
		l, aerr := p.pool.acquire(p.spec, name, e.decl.Server)
		if aerr != nil {
			err = errors.Join(err, aerr)
			e.state, e.note = StateStopped, aerr.Error()
			continue
		}
		e.lease = l
		e.target = &target{name: name, up: l.s.up, timeout: e.decl.Server.CallTimeout}
		if e.target.timeout <= 0 {
			e.target.timeout = p.pool.opts.CallTimeout
		}
		unsub, unrelay := l.s.up.subscribe(func() { poke(p.changed) }), l.s.up.watch.relay(p.relayUpdated(e.target))
		e.unsub = func() { unsub(); unrelay() }
		if e.decl.Server.Start == config.StartEager || p.listed.Load() {
			l.s.up.start()
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		releaseAll(ctx, next)
		return errClosed
	}
	old := p.entries
	p.entries = next
	p.mu.Unlock()
	// The same definition holds the same process: releasing the old lease
	// after taking the new one keeps it running.
	err = errors.Join(err, releaseAll(ctx, old))
	p.sync()
	return err
}

// plan turns decls into entries, deciding which may run.
func (p *Project) plan(decls []Decl) map[string]*entry {
	next := map[string]*entry{}
	for _, d := range decls {
		e := &entry{decl: d}
		switch {
		case config.ValidServerName(d.Name) != nil:
			e.state, e.note = StateInvalid, fmt.Sprintf("servers.%s: %v", d.Name, config.ValidServerName(d.Name))
		case !d.Server.IsEnabled():
			e.state = StateDisabled
		case d.Origin != OriginUser:
			e.approve(p.spec)
		}
		prev := next[d.Name]
		if prev == nil {
			next[d.Name] = e
			continue
		}
		// One name, two declarations: the broker's (trusted) one is served.
		ignored := e
		if d.Origin == OriginUser && prev.decl.Origin != OriginUser {
			next[d.Name], ignored = e, prev
		}
		s := ignored.decl.Server
		p.spec.Log.Warn("hosted server declared twice; serving the broker config's one", "server", d.Name,
			"ignored", commandLine(s.Command, s.Args, s.URL))
	}
	return next
}

// approve checks a project-declared server's approval; one that may not
// run gets StateNeedsApproval and the command that approves it.
func (e *entry) approve(spec ProjectSpec) {
	fix := fmt.Sprintf("berth servers approve %s", shellQuote(spec.Root))
	if spec.Approvals == nil {
		e.state, e.note, e.fix = StateNeedsApproval, "declared by the project and not approved", fix
		return
	}
	a, err := spec.Approvals.Check(spec.ID, e.decl.Name, e.decl.Server)
	switch {
	case err != nil:
		e.state, e.note, e.fix = StateNeedsApproval, "approval could not be read: "+err.Error(), fix
	case a.State == ApprovalChanged:
		e.state, e.note, e.fix = StateNeedsApproval,
			fmt.Sprintf("its definition changed since it was approved on %s; it runs again once approved", a.ApprovedAt.Format(time.DateOnly)), fix
	case a.State != ApprovalApproved:
		e.state, e.note, e.fix = StateNeedsApproval, "declared by the project and never approved", fix
	}
	if e.state == StateNeedsApproval {
		spec.Log.Warn("hosted server waits for approval", "server", e.decl.Name, "why", e.note, "fix", fix)
	}
}

func releaseAll(ctx context.Context, entries map[string]*entry) error {
	var err error
	for _, e := range entries {
		if e.lease != nil {
			e.unsub()
			err = errors.Join(err, e.lease.release(ctx))
		}
	}
	return err
}

// watch syncs the installed servers after upstream changes.
func (p *Project) watch() {
	defer close(p.done)
	for {
		select {
		case <-p.changed:
			p.sync()
		case <-p.stopc:
			return
		}
	}
}

// OnChange registers f, called (from one goroutine, never concurrently)
// after the hosted surface may have changed: a server started, restarted,
// failed or stopped, or its lists changed. The installed MCP servers have
// already sent notifications/*/list_changed to their sessions by then.
func (p *Project) OnChange(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onChange = append(p.onChange, f)
}

// Close uninstalls the hosted surface from every MCP server and releases
// the project's servers, waiting for processes that stop (or ctx).
func (p *Project) Close(ctx context.Context) error {
	p.updMu.Lock()
	defer p.updMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for srv, in := range p.servers {
		in.removeAll(srv)
	}
	clear(p.servers)
	entries := p.entries
	p.entries = map[string]*entry{}
	p.mu.Unlock()
	close(p.stopc)
	<-p.done
	return releaseAll(ctx, entries)
}

// Status lists every declared server, by name.
func (p *Project) Status() []Status {
	p.mu.Lock()
	entries := make([]*entry, 0, len(p.entries))
	served := make([]int, 0, len(p.entries))
	for _, name := range sortedKeys(p.entries) {
		entries = append(entries, p.entries[name])
		served = append(served, p.entries[name].served)
	}
	p.mu.Unlock()
	out := make([]Status, len(entries))
	for i, e := range entries {
		st := Status{State: e.state, LastError: e.note, Fix: e.fix}
		if e.target != nil {
			st = e.target.up.status()
			st.Tools, st.Calls, st.Errors = served[i], e.target.calls.Load(), e.target.errors.Load()
			if st.State == StateFailed {
				st.Fix = fmt.Sprintf("berth servers restart %s %s", shellQuote(p.spec.Root), e.decl.Name)
			}
		}
		out[i] = e.describe(st)
	}
	return out
}

// describe fills the declaration's part of st.
func (e *entry) describe(st Status) Status {
	s := e.decl.Server
	st.Name, st.Origin, st.Share, st.Digest = e.decl.Name, e.decl.Origin, s.Share, s.Digest()
	st.Command = commandLine(s.Command, s.Args, s.URL)
	return st
}

// Describe reports decls as the project of spec would serve them, without
// starting anything: for a project that is not mounted. A server that
// would run is api.ServerNotMounted; the others say why they would not
// (disabled, invalid, waiting for approval with the command that
// approves it).
func Describe(spec ProjectSpec, decls []Decl) []Status {
	spec.Log = slog.New(slog.DiscardHandler) // plan's warnings are for mounts
	next := (&Project{spec: spec}).plan(decls)
	out := make([]Status, 0, len(next))
	for _, name := range sortedKeys(next) {
		e := next[name]
		st := Status{State: e.state, LastError: e.note, Fix: e.fix}
		if st.State == "" {
			st.State = api.ServerNotMounted
		}
		out = append(out, e.describe(st))
	}
	return out
}

// Serves reports whether tool is one of the hosted tools the project
// serves now (for the metrics' tool labels).
func (p *Project) Serves(tool string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[tool]
}

// ToolCount is how many hosted tools the project serves now.
func (p *Project) ToolCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.tools)
}

// Logs returns the server's last stderr lines, oldest first; nil for a
// server this project does not run.
func (p *Project) Logs(name string) []Line {
	p.mu.Lock()
	e := p.entries[name]
	p.mu.Unlock()
	if e == nil || e.target == nil {
		return nil
	}
	return e.target.up.stderr.snapshot()
}

// Restart starts a failed server again; a server that is not failed is
// left as it is, and Restart reports false.
func (p *Project) Restart(name string) (restarted bool, err error) {
	p.mu.Lock()
	e := p.entries[name]
	p.mu.Unlock()
	if e == nil || e.target == nil {
		return false, fmt.Errorf("no hosted server %q runs in this project", name)
	}
	return e.target.up.restart(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shellQuote quotes a path for a command a user copies.
func shellQuote(s string) string {
	return commandLine("", []string{s}, "")[1:]
}

// Decls lists the servers of the broker's config (trusted) and of the
// project's config (run once approved), in name order, user ones first.
func Decls(user, project map[string]config.Server) []Decl {
	out := make([]Decl, 0, len(user)+len(project))
	for _, name := range sortedKeys(user) {
		out = append(out, Decl{Name: name, Server: user[name], Origin: OriginUser})
	}
	for _, name := range sortedKeys(project) {
		out = append(out, Decl{Name: name, Server: project[name], Origin: OriginProject})
	}
	return out
}
