package mounttable

import (
	"context"
	"log/slog"
	"sync"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/finder"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostedServers are what every mount's hosted servers share: the broker's one
// pool of server processes, the approvals in berth.db and the servers of
// the broker's own config.
type HostedServers struct {
	pool      *hosted.Pool
	approvals *hosted.Approvals
	db        *store.DB                // the registry, for sibling worktrees' approvals
	user      map[string]config.Server // the broker config's servers: trusted
	logs      *logring.Ring
	log       *slog.Logger
	onChange  func() // the dashboard's poke
}

func newHostedServers(cfg brokerconfig.Config, db *store.DB, log *slog.Logger, logs *logring.Ring, onChange func()) *HostedServers {
	return &HostedServers{
		pool:      hosted.NewPool(hosted.Options{Log: log, Version: api.Version, Home: cfg.Home, CheckURL: selfURLs(cfg)}),
		approvals: hosted.NewApprovals(db),
		db:        db,
		user:      cfg.Servers,
		logs:      logs,
		log:       log,
		onChange:  onChange,
	}
}

// stop stops every server still running (at shutdown, after the mounts).
func (d *HostedServers) stop(ctx context.Context) {
	if d == nil {
		return
	}
	if err := d.pool.Close(ctx); err != nil {
		d.log.Warn("stop hosted servers", "err", err)
	}
}

// mountServers are one mount's hosted MCP servers: the set it serves,
// installed on the mount's one MCP server and kept in step with the
// project's config (each edit the engine applies) and the user's approvals.
type mountServers struct {
	hp   *hosted.Project
	deps *HostedServers
	eng  *project.Engine
	log  *slog.Logger
	ctx  context.Context // the servers' lifetime: until close

	// warnMu guards over. It is a leaf: changed takes it from hp's
	// goroutines (an Update, an upstream's change), and calls nothing
	// while it holds it. Updates need no lock of their own here: hp
	// serializes Update and Close.
	warnMu sync.Mutex
	over   bool // the project was warned about: more tools than mcp.max_tools_warning

	stop context.CancelFunc
}

// openServers starts serving the project's hosted servers on its engine's
// MCP server. It never fails the mount: a project whose servers cannot be
// set up is served without them, and the log says why.
func (d *HostedServers) openServers(ctx context.Context, id string, eng *project.Engine, log *slog.Logger, repo gitrepo.Identity) *mountServers {
	if d == nil {
		return nil
	}
	log = log.With("project", id)
	spec := hosted.ProjectSpec{
		ID: id, Name: eng.Name(), Root: eng.Root(), Log: log, Approvals: approvalsFor(d.approvals, d.db, repo), Repository: repo.ID,
		Echo:  slog.New(d.logs.Handler(ringOnly{d.log.Handler()})).With("project", id),
		OnLog: eng.RelayLog,
	}
	hp, err := d.pool.Open(ctx, spec, hosted.Decls(d.user, eng.Config().Servers))
	if err != nil {
		log.Warn("hosted MCP servers are off for this project", "err", err)
		return nil
	}
	ms := &mountServers{hp: hp, deps: d, eng: eng, log: log}
	ms.ctx, ms.stop = context.WithCancel(context.WithoutCancel(ctx))
	hp.Install(eng.Server())
	hp.OnChange(ms.changed)
	ms.changed()
	eng.OnConfigApplied(ms.apply)
	eng.SetHosted(ms)
	return ms
}

// release lets go of the mount's servers (those no other project holds
// stop), bounded by ctx.
func (ms *mountServers) release(ctx context.Context) {
	if ms == nil {
		return
	}
	ms.eng.OnConfigApplied(nil)
	ms.stop()
	if err := ms.hp.Close(ctx); err != nil { // after an update under way
		ms.log.Warn("stop hosted servers", "err", err)
	}
}

// apply serves the servers of cfg, an edit of the project's config the
// engine applied.
func (ms *mountServers) apply(cfg config.Config) {
	if ms.ctx.Err() != nil {
		return // closed
	}
	if err := ms.hp.Update(ms.ctx, hosted.Decls(ms.deps.user, cfg.Servers)); err != nil && ms.ctx.Err() == nil {
		ms.log.Warn("update hosted servers", "err", err)
	}
}

// refresh serves the servers of the config the engine applies, as the
// approvals now stand (after an approval or a revocation): a revoked
// server stops. An edit the engine has not applied (it refused it, or has
// yet to see it) declares nothing here; the servers it declares start
// when the engine applies it (apply).
func (ms *mountServers) refresh() {
	ms.apply(ms.eng.Config())
}

// changed runs after the hosted surface may have changed: it warns when
// the project now offers more tools than mcp.max_tools_warning and pokes
// the dashboard.
func (ms *mountServers) changed() {
	own, hostedTools := len(ms.eng.ToolNames()), ms.hp.ToolCount()
	limit := ms.eng.Config().MCP.MaxToolsWarning
	ms.warnMu.Lock()
	n := own + hostedTools
	// The engine warned about its own tools at open; this is about the
	// hosted ones joining them, once as the count crosses the limit (lazy
	// servers join one by one), again only after it fell back under it.
	warn := limit > 0 && hostedTools > 0 && n > limit && !ms.over
	ms.over = limit > 0 && n > limit && (ms.over || warn)
	ms.warnMu.Unlock()
	if warn {
		ms.log.Warn("more tools than mcp.max_tools_warning: some clients degrade past that many; trim a server with servers.<name>.tools (allow/deny) or mcp.enabled_tool_groups",
			"tools", n, "hosted_tools", hostedTools, "max_tools_warning", limit)
	}
	if ms.deps.onChange != nil {
		ms.deps.onChange()
	}
}

// ToolNames implements project.Hosted.
func (ms *mountServers) ToolNames() []string { return ms.hp.ToolNames() }

var _ project.HostedCompleter = (*mountServers)(nil)

// Complete implements project.HostedCompleter.
func (ms *mountServers) Complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
	return ms.hp.Complete(ctx, req)
}

// Subscribe implements project.Hosted.
func (ms *mountServers) Subscribe(ctx context.Context, req *mcp.SubscribeRequest) (bool, error) {
	return ms.hp.Subscribe(ctx, req)
}

// Unsubscribe implements project.Hosted.
func (ms *mountServers) Unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) bool {
	return ms.hp.Unsubscribe(ctx, req)
}

// Servers implements project.Hosted.
func (ms *mountServers) Servers() []project.HostedServer {
	list := ms.hp.Status()
	out := make([]project.HostedServer, len(list))
	for i, st := range list {
		out[i] = project.HostedServer{Name: st.Name, State: string(st.State), Origin: string(st.Origin), Tools: st.Tools, LastError: st.LastError, Fix: st.Fix}
	}
	return out
}

// newFinder makes the mount's finder over the engine's tools and the
// hosted servers (nil: none), its cache in db.
func newFinder(eng *project.Engine, id string, db *store.DB, ms *mountServers, log *slog.Logger) *finder.Finder {
	opts := finder.Options{Tools: eng.Tools, Config: eng.Config, Log: log}
	if db != nil {
		opts.Cache = finder.NewCache(db, id)
	}
	if ms != nil {
		opts.Servers = ms.hp.Status
	}
	f := finder.New(opts)
	if ms != nil {
		ms.hp.OnChange(f.Changed)
	}
	return f
}

// ServesHosted reports whether tool is a hosted tool the mount serves now.
func (m *Mount) ServesHosted(tool string) bool {
	return m.servers != nil && m.servers.hp.Serves(tool)
}

// HasHostedServers reports whether the mount serves hosted servers (false
// when its project declares none the broker could set up).
func (m *Mount) HasHostedServers() bool { return m.servers != nil }

// HostedStatus is the state of each hosted server of the mount; nil for none.
func (m *Mount) HostedStatus() []api.ServerStatus {
	if m.servers == nil {
		return nil
	}
	return m.servers.hp.Status()
}

// RestartHosted starts the failed hosted server name again, or ends a
// running one's process and starts it again (hosted.Project.Restart);
// hosted.ErrNoSuchServer when the mount serves none of that name.
func (m *Mount) RestartHosted(ctx context.Context, name string) (restarted bool, err error) {
	if m.servers == nil {
		return false, hosted.ErrNoSuchServer
	}
	return m.servers.hp.Restart(ctx, name)
}

// RefreshHosted decides the mount's hosted servers again after their
// approvals changed: a revoked server stops, an approved one starts.
func (m *Mount) RefreshHosted() {
	if m.servers != nil {
		m.servers.refresh()
	}
}

// Approvals is the user's approvals of the projects' servers, in berth.db.
func (d *HostedServers) Approvals() *hosted.Approvals { return d.approvals }

// Decls is the servers a project declares in project, beside the broker
// config's own.
func (d *HostedServers) Decls(project map[string]config.Server) []hosted.Decl {
	return hosted.Decls(d.user, project)
}

// Describe is the hosted servers the project id at root declares in
// project, as they would run now: the approvals of its repository's
// worktrees count.
func (d *HostedServers) Describe(id, root string, project map[string]config.Server) []api.ServerStatus {
	spec := hosted.ProjectSpec{ID: id, Root: root, Approvals: approvalsFor(d.approvals, d.db, gitrepo.Identify(root))}
	return hosted.Describe(spec, d.Decls(project))
}

// ringOnly handles nothing itself: under the log ring's handler, records
// reach the project's recent logs and go no further (the broker's log has
// them already). It takes the levels the broker's log takes.
type ringOnly struct{ levels slog.Handler }

func (r ringOnly) Enabled(ctx context.Context, l slog.Level) bool { return r.levels.Enabled(ctx, l) }
func (ringOnly) Handle(context.Context, slog.Record) error        { return nil }
func (r ringOnly) WithAttrs([]slog.Attr) slog.Handler             { return r }
func (r ringOnly) WithGroup(string) slog.Handler                  { return r }
