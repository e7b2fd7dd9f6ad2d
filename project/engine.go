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
	"github.com/berth-dev/berth/project/gitrepo"
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
	// Embedder, when set, is the user's embedding server (the broker's
	// search.embeddings): standards search fuses its ranking with BM25F's.
	// A project's own config can never set it.
	Embedder search.Embedder
	// Lambdas runs the workflow gates' lambdas in a child process under
	// limits (the broker's runs the berth binary itself); nil: lambda
	// checks fail, saying so.
	Lambdas workflow.Lambdas
	// Folder opens Root as a folder in no project (folder.go): no config
	// file, watcher, index nor workflows; nothing is read of it but its
	// git state, nothing written into it.
	Folder bool
	// Repository, when set, is the git repository the project is a
	// confirmed worktree of, for its workflow sessions; nil: none.
	Repository workflow.Repository
	// SharedIndex, when set, is the content index the project's search
	// shares with the other worktrees of its repository; nil: an index of
	// its own.
	SharedIndex *search.Shared
	// Git is the git repository the root is a confirmed worktree of
	// (gitrepo.Identify); zero: none, or not known. Its worktrees' name,
	// from the origin remote, is read with git once for all of them.
	Git gitrepo.Identity
}

// Endpoint is what the broker serves of a project beside the IDE's stdio.
type Endpoint struct {
	Mode    string   // what the project's state file offers: dual, stdio or http; "" when none is written
	URL     string   // the project's HTTP endpoint; "" while it has no port
	Missing []string // what the broker cannot do for the project now, each with its fix
}

// Engine is an opened project. It is safe for concurrent use.
//
// What its tool groups enable (the search index, the workflow engine, the
// catalog of resources and prompts, their tools) are its parts
// (parts.go): built at Open and again when an edit of the project's
// config changes the groups (reload.go), swapped whole under mu.
type Engine struct {
	root    string
	id      string
	name    string
	folder  bool         // a folder in no project (Options.Folder)
	log     *slog.Logger // also to the sessions (sessionlog.go)
	base    *slog.Logger // to the broker's log only
	slog    *sessionLog
	server  ServerInfo
	opened  time.Time
	git     *gitCache
	logs    *logring.Ring // nil: no get_recent_logs
	db      *store.DB
	policy  *links.Policy       // which symlinks indexing and watching follow; fixed at open
	lambdas workflow.Lambdas    // runs the workflow gates' lambdas (Options.Lambdas)
	repo    workflow.Repository // the project's git repository (Options.Repository); nil: none
	// embedder is the broker's search.embeddings (nil: none); fixed at open.
	embedder search.Embedder
	// shared is the repository's content index (Options.SharedIndex); nil: none.
	shared *search.Shared

	watcher *watch.Watcher // nil if the folders cannot be watched (logged)
	config  *watch.Files   // the config files, applying their edits; nil if they cannot be watched (logged)
	cancel  context.CancelFunc
	loops   sync.WaitGroup // the goroutines applying watcher batches

	transports  []string
	transportOf func(context.Context) string
	endpointOf  func() Endpoint
	srv         *mcp.Server // the project's one MCP server, every transport's
	lister      *toolLister // its tools/list, below the middleware
	schemaJSON  schemaBytes // its tools' schemas, marshaled once

	mu        sync.Mutex          // guards the fields below
	p         *parts              // never nil after Open
	tools     []string            // what the server lists
	configErr string              // why the last config edit was not applied; "" when it was
	onConfig  func(config.Config) // told of each config edit applied (OnConfigApplied)

	hosted hostedRef // the broker's hosted servers on srv (hosted.go)
}

// Open opens the project at opts.Root.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	cfg := folderConfig()
	if !opts.Folder {
		var err error
		if cfg, err = config.Load(opts.Root); err != nil {
			return nil, err
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{
		root:    opts.Root,
		folder:  opts.Folder,
		lambdas: opts.Lambdas,
		repo:    opts.Repository,
		id:      opts.ID,
		slog:    newSessionLog(),
		server:  opts.Server,
		opened:  time.Now(),
		git:     newGitCache(),
		logs:    opts.Logs,
		db:      opts.DB,

		transports:  opts.Transports,
		transportOf: opts.TransportOf,
		endpointOf:  opts.Endpoint,
	}
	e.base = log.With("project", opts.ID)
	e.log = slog.New(e.slog.handler(e.base.Handler()))
	// The name comes from git's origin remote, which takes a git process
	// or two: they run while the watcher and the parts start, and the
	// server, which is the first to need the name, waits for them.
	remote := make(chan string, 1)
	go func() { remote <- remotes.remoteOf(ctx, opts.Root, opts.Git) }()
	name := sync.OnceValue(func() string { return projectName(<-remote, opts.Root) })
	e.policy = links.New(e.root, append(slices.Clone(opts.AllowOutside), cfg.RAG.AllowOutside...))
	e.embedder = opts.Embedder
	e.shared = opts.SharedIndex
	if err := e.open(ctx, cfg, opts, name); err != nil {
		name() // git is done before Open returns
		e.Close()
		return nil, err
	}
	return e, nil
}

// open starts the watcher first (so no change is missed), then the parts,
// the server (once the project's name is known: name), and the loops
// that feed the parts from the watcher and apply config edits.
func (e *Engine) open(ctx context.Context, cfg config.Config, opts Options, name func() string) error {
	for _, warning := range cfg.Warnings {
		e.log.Warn("project config: " + warning)
	}
	if dirs := e.policy.Allowed(); len(dirs) > 0 {
		e.log.Info("indexing follows symlinks into folders outside the project (rag.allow_outside)", "folders", dirs)
	}
	var shared []watch.Option
	if opts.Watch != nil {
		shared = append(shared, watch.Shared(opts.Watch))
	}
	if !e.folder {
		w, err := watch.New(e.root, sources(cfg), e.log, append(shared, watch.FollowLinks(e.policy))...)
		if err != nil {
			e.log.Warn("file watching is off for this project: the index will not follow edits until the next mount", "err", err)
		} else {
			e.watcher = w
		}
	}
	p, err := e.buildParts(ctx, cfg, nil)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.p = p
	e.mu.Unlock()
	e.name = name()
	if err := e.openServer(ctx, opts.Schemas); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel = cancel
	if e.watcher != nil {
		index, workflows := e.watcher.Subscribe(), e.watcher.Subscribe()
		e.loops.Add(2)
		go func() {
			defer e.loops.Done()
			search.Follow(loopCtx, func() *search.Index { return e.current().index }, index)
		}()
		go func() { defer e.loops.Done(); e.reloadWorkflows(loopCtx, workflows) }()
	}
	if e.folder {
		return nil // no config files to follow
	}
	reload := func() { e.reload(loopCtx) }
	if e.config, err = watch.WatchFiles(filepath.Join(e.root, config.Dir), config.Files, reload, shared...); err != nil {
		e.log.Warn("edits of the project config are applied only at the next mount: its folder cannot be watched", "err", err)
	}
	return nil
}

// sources are the folders the index reads and the watcher watches.
func sources(cfg config.Config) []string {
	return []string{cfg.RAG.StandardsPath, cfg.RAG.UsagePath, cfg.RAG.WorkflowsPath}
}

// projectName is the repository name of the origin remote's URL, else
// the root folder's name.
func projectName(remote, root string) string {
	if n := NameFromRemote(remote); n != "" {
		return n
	}
	return filepath.Base(root)
}

// Logger is the engine's logger: its records go to the broker's log and
// to every session of the project's server (sessionlog.go). The broker
// logs what concerns the project's sessions with it.
func (e *Engine) Logger() *slog.Logger { return e.log }

// Name is the project's display name.
func (e *Engine) Name() string { return e.name }

// Root is the project's resolved root.
func (e *Engine) Root() string { return e.root }

// Folder reports whether the engine serves a folder in no project
// (Options.Folder).
func (e *Engine) Folder() bool { return e.folder }

// Config is the project's configuration as applied: as loaded at open,
// with the edits applied since (reload.go).
func (e *Engine) Config() config.Config { return e.current().cfg }

// current is the engine's parts now.
func (e *Engine) current() *parts {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.p
}

// openServer builds the project's MCP server with every enabled tool and
// asks it which tools it lists. Resources and prompts are advertised
// whatever the groups: a config edit may enable them, and the sessions
// are then told their lists changed.
func (e *Engine) openServer(ctx context.Context, schemas *mcp.SchemaCache) error {
	instructions := fmt.Sprintf("Tools for the project %q at %s.", e.name, e.root)
	if e.folder {
		instructions = fmt.Sprintf("Tools for the folder %q at %s. %s", e.name, e.root, folderHint(e.root, "no standards and no workflows"))
	}
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		// Not e.log: what the SDK logs about sessions must not be sent to them.
		Logger:      slog.New(quiet{e.base.Handler()}),
		SchemaCache: schemas,
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		},
		SubscribeHandler:   e.subscribe,   // hosted.go
		UnsubscribeHandler: e.unsubscribe, // hosted.go
		CompletionHandler:  e.complete,    // complete.go
		PageSize:           resourcePageSize,
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "berth", Title: "Berth: " + e.name, Version: e.server.Version}, opts)
	e.lister = newToolLister(s) // before any middleware
	e.schemaJSON.group = func(tool string) string { return toolGroup(e.current().groups, tool) }
	s.AddReceivingMiddleware(e.schemaJSON.toolList, e.tellMissing, e.serveFiles)
	addServerInfo(s, e)
	p := e.current()
	p.tools, p.groups = addGroupTools(s, p)
	if e.folder {
		addFolderTools(s, e.root)
	}
	workflow.AddCurrentDate(s)
	if e.logs != nil {
		addRecentLogs(s, e)
	}
	p.catalog.serve(s)
	e.srv = s
	if err := e.listTools(ctx); err != nil {
		return err
	}
	e.slog.serve(s)
	return nil
}

// listTools asks the server which tools it lists now, and warns past
// mcp.max_tools_warning.
func (e *Engine) listTools(ctx context.Context) error {
	names, err := e.lister.names(ctx)
	if err != nil {
		return fmt.Errorf("list the project's tools: %w", err)
	}
	if max := e.Config().MCP.MaxToolsWarning; max > 0 && len(names) > max {
		e.log.Warn("more tools than mcp.max_tools_warning: some clients degrade past that many; trim mcp.enabled_tool_groups",
			"tools", len(names), "max_tools_warning", max)
	}
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
	p := e.current()
	st := map[string]any{
		"config_file":     p.cfg.File,
		"tool_groups":     p.cfg.MCP.EnabledToolGroups,
		"config_warnings": p.cfg.Warnings,
		"tools":           e.ToolNames(),
		"watching":        e.watcher != nil,
	}
	e.mu.Lock()
	if e.configErr != "" {
		st["config_error"] = e.configErr
	}
	e.mu.Unlock()
	if p.index != nil {
		st["index"] = p.index.Status()
	}
	if p.workflow != nil {
		if list, err := p.workflow.ListWorkflows(context.Background(), ""); err == nil {
			st["workflows"] = list
		}
		st["imported_sessions"] = p.workflow.Imported()
		if list, err := p.workflow.Sessions(context.Background(), workflow.FilterAll); err == nil {
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
var ErrSearchOff = search.ErrOff

// IndexStatus is the search index's status; false when the rag group is off.
func (e *Engine) IndexStatus() (search.Status, bool) {
	ix := e.current().index
	if ix == nil {
		return search.Status{}, false
	}
	return ix.Status(), true
}

// WaitIndexReady returns when the search index has finished its first
// catch-up (at once when the rag group is off), or when ctx ends.
func (e *Engine) WaitIndexReady(ctx context.Context) error {
	ix := e.current().index
	if ix == nil {
		return nil
	}
	return ix.WaitReady(ctx)
}

// Search runs a standards search, as search_standards does.
func (e *Engine) Search(ctx context.Context, q search.Query) (*search.Result, error) {
	ix := e.current().index
	if ix == nil {
		return nil, ErrSearchOff
	}
	return ix.Search(ctx, q)
}

// Close stops the watchers, then the loops that apply their batches, then
// the parts and the notifications to sessions.
func (e *Engine) Close() error {
	var errs []error
	if e.watcher != nil {
		errs = append(errs, e.watcher.Close())
	}
	if e.config != nil {
		errs = append(errs, e.config.Close())
	}
	if e.cancel != nil {
		e.cancel()
	}
	e.loops.Wait() // a reload in progress has swapped its parts in
	if p := e.current(); p != nil {
		errs = append(errs, p.close(nil))
	}
	e.slog.close()
	return errors.Join(errs...)
}

// quiet passes on only warnings and errors: the SDK logs every session at info.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
