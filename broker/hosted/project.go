package hosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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

// ApprovalChecker says whether a project-declared server may run: its
// definition s, reaching d now (the program, the project's files it runs,
// its roots), in the project at root; [Approvals] is the one backed by
// berth.db.
type ApprovalChecker interface {
	Check(projectID, root, name string, s config.Server, d *api.ServerDefinition) (Approval, error)
}

// ProjectSpec names the project a [Project] serves.
type ProjectSpec struct {
	ID   string // the project's id (store and registry key)
	Name string // its display name (the name of its root in roots/list)
	Root string // its resolved root: the default cwd and the root servers are told
	// Repository is the id of the git repository the project is a
	// worktree of ("" for none): a share: repository server runs once
	// for all of the repository's worktrees.
	Repository string
	Log        *slog.Logger // the mount's logger (with its project attribute)
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

	decls []Decl // the declarations of the last Update; guarded by updMu

	// listed is set once a session has listed what the project offers:
	// from then on a lazy server that Update adds starts at once, so that
	// sessions which already listed hear of its tools (list_changed).
	listed atomic.Bool

	changed chan struct{} // cap 1: an upstream changed state or lists
	stopc   chan struct{}
	done    chan struct{}

	guardStop chan struct{} // closed by Close: the file guard ends
	guardDone chan struct{} // closed when it has
	guardOnce sync.Once
}

// entry is one declared server in this project.
type entry struct {
	decl  Decl
	def   *api.ServerDefinition // the declaration and what it reaches, when planned
	state State                 // for a server that does not run: disabled, needs approval, shadowed
	note  string
	fix   string
	// changed says what differs from the approval, for one that waits.
	changed []string
	// approved is the tools filter the approval was given with (zero for
	// the broker config's servers): only what it and the current one both
	// allow is served.
	approved config.ToolFilter
	lease    *lease // nil when it does not run
	unsub    func()
	target   *target
	served   int // tools served after the allow/deny list, at the last sync
	withheld int // tools the current filter allows and the approved one does not, at the last sync
}

// allows reports whether the server's tool is served: its current tools
// filter and the one it was approved with both allow it.
func (e *entry) allows(tool string) bool {
	return e.decl.Server.Tools.Allows(tool) && e.approved.Allows(tool)
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
		guardStop: make(chan struct{}), guardDone: make(chan struct{}),
	}
	go hp.watch()
	go hp.guard()
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
	return p.update(ctx, decls)
}

// update is Update, called with updMu held.
func (p *Project) update(ctx context.Context, decls []Decl) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return errClosed
	}
	p.decls = decls
	next := p.plan(decls)
	var err error
	for _, name := range sortedKeys(next) {
		e := next[name]
		if e.state != "" {
			continue
		}
		l, aerr := p.pool.acquire(p.spec, name, e.decl, e.def)
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

// plan turns decls into entries, deciding which may run. A project's
// declaration of a name the broker's config declares too is kept as a
// shadowed entry (under shadowKey), so that every view shows the clash.
func (p *Project) plan(decls []Decl) map[string]*entry {
	next := map[string]*entry{}
	for _, d := range decls {
		e := &entry{decl: d}
		if config.ValidServerName(d.Name) == nil {
			e.def = definition(d.Server, inspect(p.spec.Root, d.Server, d.Origin != OriginUser))
		}
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
		ignored.state, ignored.fix = StateShadowed, ""
		ignored.note = fmt.Sprintf("the broker's config declares a server %q too, and it is served instead of this one: rename one of them", d.Name)
		next[shadowKey(d.Name)] = ignored
		p.spec.Log.Warn("hosted server declared twice; serving the broker config's one", "server", d.Name,
			"ignored", commandLine(s.Command, s.Args, s.URL))
	}
	for _, name := range sortedKeys(next) {
		if e := next[name]; e.state == StateNeedsApproval {
			p.spec.Log.Warn("hosted server waits for approval", "server", e.decl.Name, "why", e.note, "fix", e.fix)
		}
	}
	return next
}

// shadowKey is the entries key of a shadowed declaration of name: beside
// name's own in name order, and no server name.
func shadowKey(name string) string { return name + "\x00shadowed" }

// approve checks a project-declared server's approval; one that may not
// run gets StateNeedsApproval and the command that approves it.
func (e *entry) approve(spec ProjectSpec) {
	fix := fmt.Sprintf("berth servers approve %s", shellQuote(spec.Root))
	if spec.Approvals == nil {
		e.state, e.note, e.fix = StateNeedsApproval, "declared by the project and not approved", fix
		return
	}
	a, err := spec.Approvals.Check(spec.ID, spec.Root, e.decl.Name, e.decl.Server, e.def)
	switch {
	case err != nil:
		e.state, e.note, e.fix = StateNeedsApproval, "approval could not be read: "+err.Error(), fix
	case a.State == ApprovalChanged:
		e.state, e.fix, e.changed = StateNeedsApproval, fix, a.Changed
		e.note = fmt.Sprintf("%s changed since it was approved on %s; it runs again once approved", strings.Join(a.Changed, ", "), a.ApprovedAt.Format(time.DateOnly))
	case a.State != ApprovalApproved:
		e.state, e.note, e.fix = StateNeedsApproval, "declared by the project and never approved", fix
	default:
		e.approved = a.Tools
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
	p.guardOnce.Do(func() { close(p.guardStop) })
	<-p.guardDone
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
	withheld := make([]int, 0, len(p.entries))
	for _, name := range sortedKeys(p.entries) {
		entries = append(entries, p.entries[name])
		served = append(served, p.entries[name].served)
		withheld = append(withheld, p.entries[name].withheld)
	}
	p.mu.Unlock()
	out := make([]Status, len(entries))
	for i, e := range entries {
		st := Status{State: e.state, LastError: e.note, Fix: e.fix}
		if e.target != nil {
			st = e.target.up.status()
			st.Tools, st.Calls, st.Errors, st.Withheld = served[i], e.target.calls.Load(), e.target.errors.Load(), withheld[i]
			switch st.State {
			case StateFailed:
				st.Fix = fmt.Sprintf("berth servers restart %s %s", shellQuote(p.spec.Root), e.decl.Name)
			case StateNeedsApproval:
				st.Fix = fmt.Sprintf("berth servers approve %s", shellQuote(p.spec.Root))
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
	st.Command = summary(commandLine(s.Command, s.Args, s.URL))
	st.Definition, st.Changed = e.def, e.changed
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

// ErrNoSuchServer is Restart's error for a name the project runs no
// server under.
var ErrNoSuchServer = errors.New("no such hosted server")

// Restart starts a failed server again, or ends a running one's process
// and starts it again, and returns once it serves again from the new
// process, or with an error saying why it does not (it failed, it waits
// for approval, or it is still starting after twice StartTimeout or when
// ctx ends). A server in another state is left as it is, and Restart
// reports false.
func (p *Project) Restart(ctx context.Context, name string) (restarted bool, err error) {
	p.mu.Lock()
	e := p.entries[name]
	p.mu.Unlock()
	if e == nil || e.target == nil || config.ValidServerName(name) != nil {
		return false, fmt.Errorf("%w %q runs in this project", ErrNoSuchServer, name)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*p.pool.opts.StartTimeout)
	defer cancel()
	restarted, err = e.target.up.restartWait(ctx)
	if err == nil && restarted {
		p.sync() // its new lists are served before the caller's next call
	}
	return restarted, err
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
