// Package project is one project's engine: its configuration, identity,
// standards search, workflows and the MCP tools over them.
package project

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/links"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInfo is what the engine reports about the broker serving it.
type ServerInfo struct {
	Version   string
	PID       int
	StartedAt time.Time
}

// Options configures Open.
type Options struct {
	Root   string // resolved project root
	ID     string
	DB     *store.DB
	Logger *slog.Logger
	Server ServerInfo
	// Logs, when set, is the broker's log ring: get_recent_logs answers from it.
	Logs *logring.Ring
	// AllowOutside are directories outside the project (absolute) that
	// indexing may follow symlinks into, besides the project's own
	// rag.allow_outside: the broker's rag.allow_outside.
	AllowOutside []string
	// Transports name the ways sessions reach the project's server, and
	// TransportOf tells which one a request came by (get_server_info
	// reports both); nil: "" for every request.
	Transports  []string
	TransportOf func(context.Context) string
	// Schemas, when set, holds the tools' JSON schemas, inferred once for
	// every engine that shares it.
	Schemas *mcp.SchemaCache
	// Endpoint, when set, tells what the broker serves of the project
	// beside the IDE's stdio, for get_server_info; nil: nothing.
	Endpoint func() Endpoint
	// Watch, when set, is the file-watching hub the engine watches
	// through (one inotify instance for every engine that shares it);
	// nil: a watcher of its own.
	Watch *watch.Hub
}

// Endpoint is what the broker serves of a project beside the IDE's stdio.
type Endpoint struct {
	Mode    string   // what the project's state file offers: dual, stdio or http; "" when none is written
	URL     string   // the project's HTTP endpoint; "" while it has no port
	Missing []string // what the broker cannot do for the project now, each with its fix
}

// Engine is an opened project. It is safe for concurrent use.
type Engine struct {
	root   string
	id     string
	name   string
	cfg    config.Config
	log    *slog.Logger
	server ServerInfo
	opened time.Time
	git    *gitCache
	logs   *logring.Ring // nil: no get_recent_logs

	index    *search.Index    // nil when the rag group is off
	workflow *workflow.Engine // nil when neither workflow nor pos is on
	watcher  *watch.Watcher   // nil if the folders cannot be watched (logged)
	catalog  *catalog         // the standards as resources, the workflows as prompts
	cancel   context.CancelFunc
	loops    sync.WaitGroup // the goroutines applying watcher batches

	transports  []string
	transportOf func(context.Context) string
	endpointOf  func() Endpoint
	srv         *mcp.Server // the project's one MCP server, every transport's
	schemaJSON  schemaBytes // its tools' schemas, marshaled once

	mu    sync.Mutex // guards tools
	tools []string   // what server lists, asked at open
}

// Open opens the project at opts.Root.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	cfg, err := config.Load(opts.Root)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{
		root:   opts.Root,
		id:     opts.ID,
		cfg:    cfg,
		log:    log.With("project", opts.ID),
		server: opts.Server,
		opened: time.Now(),
		git:    newGitCache(),
		logs:   opts.Logs,

		transports:  opts.Transports,
		transportOf: opts.TransportOf,
		endpointOf:  opts.Endpoint,
	}
	e.name = projectName(e.git.get(ctx, opts.Root), opts.Root)
	if err := e.openParts(ctx, opts); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.openServer(ctx, opts.Schemas); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// openParts starts the watcher first (so no change is missed), then the
// search index and the workflow engine, and connects them to the watcher.
func (e *Engine) openParts(ctx context.Context, opts Options) error {
	sources := []string{e.cfg.RAG.StandardsPath, e.cfg.RAG.UsagePath, e.cfg.RAG.WorkflowsPath}
	for _, warning := range e.cfg.Warnings {
		e.log.Warn("project config: " + warning)
	}
	policy := links.New(e.root, append(slices.Clone(opts.AllowOutside), e.cfg.RAG.AllowOutside...))
	if dirs := policy.Allowed(); len(dirs) > 0 {
		e.log.Info("indexing follows symlinks into folders outside the project (rag.allow_outside)", "folders", dirs)
	}
	wopts := []watch.Option{watch.FollowLinks(policy)}
	if opts.Watch != nil {
		wopts = append(wopts, watch.Shared(opts.Watch))
	}
	w, err := watch.New(e.root, sources, e.log, wopts...)
	if err != nil {
		e.log.Warn("file watching is off for this project: the index will not follow edits until the next mount", "err", err)
	} else {
		e.watcher = w
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel = cancel
	if e.cfg.HasGroup(config.GroupRAG) {
		ix, err := search.Open(ctx, search.Options{Root: e.root, Sources: sources, DB: opts.DB, ProjectID: e.id, Logger: e.log, Links: policy})
		if err != nil {
			return fmt.Errorf("open search index: %w", err)
		}
		e.index = ix
		if e.watcher != nil {
			changes := e.watcher.Subscribe()
			e.loops.Add(1)
			go func() { defer e.loops.Done(); search.Watch(loopCtx, ix, changes) }()
		}
	}
	if e.cfg.HasGroup(config.GroupWorkflow) || e.cfg.HasGroup(config.GroupPOS) {
		var searcher workflow.Searcher // answers for workflow files that are missing
		if e.index != nil {
			searcher = e
		}
		wf, err := workflow.Open(ctx, workflow.Options{Root: e.root, WorkflowsDir: e.cfg.RAG.WorkflowsPath, DB: opts.DB, ProjectID: e.id, Logger: e.log, Search: searcher})
		if err != nil {
			return fmt.Errorf("open workflow engine: %w", err)
		}
		e.workflow = wf
	}
	e.catalog = newCatalog(e.root, e.index, e.workflow, e.log) // before the reload loop, which calls it
	if e.workflow != nil && e.watcher != nil {
		changes := e.watcher.Subscribe()
		e.loops.Add(1)
		go func() { defer e.loops.Done(); e.reloadWorkflows(loopCtx, changes) }()
	}
	return nil
}

// reloadWorkflows reloads the definitions when a batch touches the workflows folder.
func (e *Engine) reloadWorkflows(ctx context.Context, changes <-chan []string) {
	for {
		select {
		case <-ctx.Done():
			return
		case batch, ok := <-changes:
			if !ok {
				return
			}
			for _, rel := range batch {
				if e.workflow.Relevant(filepath.Join(e.root, rel)) {
					e.workflow.Reload()
					e.catalog.workflowsChanged()
					break
				}
			}
		}
	}
}

func projectName(g *GitInfo, root string) string {
	if g != nil {
		if n := NameFromRemote(g.Remote); n != "" {
			return n
		}
	}
	return filepath.Base(root)
}

// Name is the project's display name.
func (e *Engine) Name() string { return e.name }

// Root is the project's resolved root.
func (e *Engine) Root() string { return e.root }

// Config is the project's configuration as loaded at open.
func (e *Engine) Config() config.Config { return e.cfg }

// openServer builds the project's MCP server with every enabled tool and
// asks it which tools it lists.
func (e *Engine) openServer(ctx context.Context, schemas *mcp.SchemaCache) error {
	opts := &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Tools for the project %q at %s.", e.name, e.root),
		Logger:       slog.New(quiet{e.log.Handler()}),
		SchemaCache:  schemas,
	}
	e.catalog.configure(opts)
	s := mcp.NewServer(&mcp.Implementation{Name: "berth", Title: "Berth: " + e.name, Version: e.server.Version}, opts)
	lister := newToolLister(s) // before any middleware
	s.AddReceivingMiddleware(e.schemaJSON.toolList)
	addServerInfo(s, e)
	if e.index != nil {
		search.AddTools(s, e.index)
	}
	if e.workflow != nil {
		workflow.AddTools(s, e.workflow, e.cfg.HasGroup(config.GroupWorkflow), e.cfg.HasGroup(config.GroupPOS))
	}
	workflow.AddCurrentDate(s)
	if e.logs != nil {
		addRecentLogs(s, e)
	}
	e.catalog.serve(s)
	names, err := lister.names(ctx)
	if err != nil {
		return fmt.Errorf("list the project's tools: %w", err)
	}
	if max := e.cfg.MCP.MaxToolsWarning; max > 0 && len(names) > max {
		e.log.Warn("more tools than mcp.max_tools_warning: some clients degrade past that many; trim mcp.enabled_tool_groups",
			"tools", len(names), "max_tools_warning", max)
	}
	e.srv = s
	e.mu.Lock()
	e.tools = names
	e.mu.Unlock()
	return nil
}

// Server is the project's one MCP server: every transport's sessions are
// its sessions.
func (e *Engine) Server() *mcp.Server { return e.srv }

// ToolNames lists the tools the project's server offers.
func (e *Engine) ToolNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.tools...)
}

// transport is how the request of ctx reached the server.
func (e *Engine) transport(ctx context.Context) string {
	if e.transportOf == nil {
		return ""
	}
	return e.transportOf(ctx)
}

// endpoint is what the broker serves of the project beside stdio.
func (e *Engine) endpoint() Endpoint {
	if e.endpointOf == nil {
		return Endpoint{}
	}
	return e.endpointOf()
}

// Status is the engine's detail for GET /projects/{id}.
func (e *Engine) Status() map[string]any {
	st := map[string]any{
		"config_file": e.cfg.File,
		"tool_groups": e.cfg.MCP.EnabledToolGroups,
		"tools":       e.ToolNames(),
		"watching":    e.watcher != nil,
	}
	if e.index != nil {
		st["index"] = e.index.Status()
	}
	if e.workflow != nil {
		if list, err := e.workflow.ListWorkflows(context.Background(), ""); err == nil {
			st["workflows"] = list
		}
		st["imported_sessions"] = e.workflow.Imported()
		if list, err := e.workflow.Sessions(context.Background(), workflow.FilterAll); err == nil {
			if len(list.Sessions) > maxStatusSessions {
				list.Sessions = list.Sessions[:maxStatusSessions]
			}
			st["workflow_sessions"] = list
		}
	}
	return st
}

// maxStatusSessions caps the workflow sessions Status lists (newest first;
// the list's count still counts them all).
const maxStatusSessions = 10

// ErrSearchOff reports a search on a project whose rag tool group is off.
var ErrSearchOff = errors.New("search_standards is off for this project: add rag to mcp.enabled_tool_groups in .praxis-os/config.yaml")

// IndexStatus is the search index's status; false when the rag group is off.
func (e *Engine) IndexStatus() (search.Status, bool) {
	if e.index == nil {
		return search.Status{}, false
	}
	return e.index.Status(), true
}

// Search runs a standards search, as search_standards does.
func (e *Engine) Search(ctx context.Context, q search.Query) (*search.Result, error) {
	if e.index == nil {
		return nil, ErrSearchOff
	}
	return e.index.Search(ctx, q)
}

// Close stops the watcher, then the loops that apply its batches, then the
// index and the workflow engine.
func (e *Engine) Close() error {
	var errs []error
	if e.watcher != nil {
		errs = append(errs, e.watcher.Close())
	}
	if e.cancel != nil {
		e.cancel()
	}
	e.loops.Wait()
	e.catalog.close()
	if e.index != nil {
		errs = append(errs, e.index.Close())
	}
	if e.workflow != nil {
		errs = append(errs, e.workflow.Close())
	}
	return errors.Join(errs...)
}

// quiet passes on only warnings and errors: the SDK logs every session at info.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
