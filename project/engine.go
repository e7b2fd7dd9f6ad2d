// Package project is one project's engine: its configuration, identity,
// standards search, workflows and the MCP tools over them.
package project

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/config"
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

	mu    sync.Mutex // guards tools
	tools []string   // names registered on every server, in order
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
	}
	e.name = projectName(ctx, opts.Root)
	return e, nil
}

func projectName(ctx context.Context, root string) string {
	if g := ReadGit(ctx, root); g != nil {
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

// NewServer builds an MCP server with every enabled tool. transport names
// how its sessions arrive ("stdio", "http", "sse", "websocket").
func (e *Engine) NewServer(transport string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "berth", Title: "Berth: " + e.name, Version: e.server.Version}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Tools for the project %q at %s.", e.name, e.root),
		Logger:       slog.New(quiet{e.log.Handler()}),
	})
	var names []string
	names = append(names, addServerInfo(s, e, transport))
	e.mu.Lock()
	e.tools = names
	e.mu.Unlock()
	return s
}

// ToolNames lists the tools every server of this engine offers.
func (e *Engine) ToolNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.tools...)
}

// Status is the engine's detail for GET /projects/{id}.
func (e *Engine) Status() map[string]any {
	return map[string]any{
		"config_file": e.cfg.File,
		"tool_groups": e.cfg.MCP.EnabledToolGroups,
		"tools":       e.ToolNames(),
	}
}

// Close releases the engine's resources.
func (e *Engine) Close() error { return nil }

// quiet passes on only warnings and errors: the SDK logs every session at info.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
