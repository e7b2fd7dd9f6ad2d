package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/store"
)

// Options configure an Engine.
type Options struct {
	// Root is the project's absolute root.
	Root string
	// WorkflowsDir is the workflows folder relative to Root
	// (config rag.workflows_path; default .praxis-os/workflows).
	WorkflowsDir string
	// PraxisStateDir is where praxis-os kept its sessions, relative to Root
	// (default .praxis-os/.cache/state).
	PraxisStateDir string
	// DB is the broker's store; ProjectID names the project's area in it.
	DB        *store.DB
	ProjectID string
	// Logger receives the engine's logs (default slog.Default()).
	Logger *slog.Logger
	// Search, when set, answers for the phase and task files a definition
	// names but does not have (nil: such content says it is missing).
	Search Searcher
	// Lambdas runs the gates' lambdas (validators and cross-field rules)
	// in a child process under limits; nil: each lambda check fails,
	// saying so.
	Lambdas Lambdas
	// Repository, when set, is the git repository the project is a
	// confirmed worktree of: sessions record its checkout at start, and
	// list_workflow_sessions with scope repository reads its sibling
	// worktrees' sessions (nil: the project is in no repository).
	Repository Repository
}

// Engine runs one project's workflows. It is safe for concurrent use.
type Engine struct {
	root         string
	workflowsDir string // absolute
	stateDir     string // absolute, for messages
	stateRel     string // relative to root: read through an os.Root of it
	area         *store.Area
	db           *store.DB
	projectID    string
	repo         Repository // nil: the project is in no repository
	log          *slog.Logger
	now          func() time.Time
	search       Searcher      // nil when the project has no search
	lambdas      Lambdas       // nil: lambda checks fail
	lambdaSlot   chan struct{} // one gate check with lambdas of this project at a time

	reloadMu sync.Mutex // serializes Reload so that an older load never replaces a newer one

	mu   sync.RWMutex // guards defs
	defs map[string]*definition.Workflow

	closed   atomic.Bool
	imported ImportReport // set once by Open

	changedMu sync.Mutex
	changed   chan struct{} // closed and replaced when a session changes (SessionsChanged)
}

// Open builds the engine of a project: it loads the workflow definitions (a
// broken one is listed with its error, never failing the open) and imports
// praxis-os sessions not imported before.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("workflow engine: root %q is not absolute", opts.Root)
	}
	if opts.DB == nil || opts.ProjectID == "" {
		return nil, errors.New("workflow engine: a store and a project id are required")
	}
	def := config.Default()
	if opts.WorkflowsDir == "" {
		opts.WorkflowsDir = def.RAG.WorkflowsPath
	}
	if opts.PraxisStateDir == "" {
		opts.PraxisStateDir = filepath.Join(config.Dir, ".cache", "state")
	}
	for _, p := range []string{opts.WorkflowsDir, opts.PraxisStateDir} {
		if !filepath.IsLocal(p) {
			return nil, fmt.Errorf("workflow engine: %q must be a relative path inside the project", p)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{
		root:         filepath.Clean(opts.Root),
		workflowsDir: filepath.Join(opts.Root, opts.WorkflowsDir),
		stateDir:     filepath.Join(opts.Root, opts.PraxisStateDir),
		stateRel:     filepath.Clean(opts.PraxisStateDir),
		area:         opts.DB.Area(opts.ProjectID, areaName),
		db:           opts.DB,
		projectID:    opts.ProjectID,
		repo:         opts.Repository,
		changed:      make(chan struct{}),
		log:          log.With("component", "workflow"),
		now:          func() time.Time { return time.Now().UTC() },
		search:       opts.Search,
		lambdas:      opts.Lambdas,
		lambdaSlot:   make(chan struct{}, 1),
	}
	e.Reload()
	rep, err := e.importPraxis(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e.log.Error("import praxis-os sessions", "err", err)
	}
	e.imported = rep
	return e, nil
}

// Reload reads the workflow definitions again. The file watcher calls it when
// anything under the workflows folder changes (see [Engine.Relevant]);
// sessions are untouched.
func (e *Engine) Reload() {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	ws, err := definition.LoadAll(e.workflowsDir)
	if err != nil {
		e.log.Warn("load workflows", "dir", e.workflowsDir, "err", err)
	}
	defs := make(map[string]*definition.Workflow, len(ws))
	broken := 0
	for _, w := range ws {
		defs[w.Type] = w
		if w.Err != nil {
			broken++
			e.log.Warn("broken workflow definition", "workflow", w.Type, "err", w.Err)
		}
	}
	e.mu.Lock()
	e.defs = defs
	e.mu.Unlock()
	e.log.Info("workflows loaded", "dir", e.workflowsDir, "count", len(ws), "broken", broken)
}

// Relevant reports whether a changed path (absolute) is one whose change
// calls for a Reload: anything inside the workflows folder, or the folder itself.
func (e *Engine) Relevant(path string) bool {
	rel, err := filepath.Rel(e.workflowsDir, filepath.Clean(path))
	return err == nil && (rel == "." || filepath.IsLocal(rel)) && !strings.HasPrefix(rel, "..")
}

// WorkflowsDir is the absolute workflows folder the engine reads.
func (e *Engine) WorkflowsDir() string { return e.workflowsDir }

// Imported reports what Open imported from praxis-os state files.
func (e *Engine) Imported() ImportReport { return e.imported }

// Close stops the engine: later calls fail with ErrClosed. The store stays
// open (the broker owns it).
func (e *Engine) Close() error {
	e.closed.Store(true)
	return nil
}

// ready fails when the engine is closed or ctx is done.
func (e *Engine) ready(ctx context.Context) error {
	if e.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// workflow returns the definition of workflowType, or nil.
func (e *Engine) workflow(workflowType string) *definition.Workflow {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.defs[workflowType]
}

// runnable returns a definition that sessions can run, or an *Error saying why not.
func (e *Engine) runnable(workflowType string) (*definition.Workflow, error) {
	w := e.workflow(workflowType)
	switch {
	case w == nil:
		return nil, newError(ErrWorkflowNotFound, "call list_workflows for the defined workflows",
			"workflow %q is not defined in %s", workflowType, e.relWorkflowsDir())
	case w.Err != nil:
		return nil, newError(ErrWorkflowBroken, "fix the definition files named above; Berth reloads them on save",
			"workflow %q cannot run: %v", workflowType, oneLine(w.Err))
	}
	return w, nil
}

func (e *Engine) relWorkflowsDir() string {
	if rel, err := filepath.Rel(e.root, e.workflowsDir); err == nil {
		return filepath.ToSlash(rel)
	}
	return e.workflowsDir
}

// oneLine joins a multi-line (errors.Join) error into one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
