package project

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parts are what the project's tool groups enable. A parts value is never
// changed once the engine holds it: a config edit builds new parts (which
// keep the index and the workflow engine when their groups stay on) and
// swaps them in.
type parts struct {
	cfg      config.Config     // the config as applied
	index    *search.Index     // nil when the rag group is off
	workflow *workflow.Engine  // nil when neither workflow nor pos is on
	catalog  *catalog          // the standards as resources, the workflows as prompts
	tools    []string          // the group tools registered on the server for these parts
	groups   map[string]string // each of tools' group (rag, workflow, pos), for tools/list's _meta
}

// wantsWorkflow reports whether cfg needs the workflow engine.
func wantsWorkflow(cfg config.Config) bool {
	return cfg.HasGroup(config.GroupWorkflow) || cfg.HasGroup(config.GroupPOS)
}

// buildParts opens the parts cfg asks for, taking over those of old (nil
// at open) that stay. On error nothing it opened is left open.
func (e *Engine) buildParts(ctx context.Context, cfg config.Config, old *parts) (_ *parts, err error) {
	p := &parts{cfg: cfg}
	if old != nil {
		if cfg.HasGroup(config.GroupRAG) {
			p.index = old.index
		}
		if wantsWorkflow(cfg) {
			p.workflow = old.workflow
		}
	}
	defer func() {
		if err != nil {
			p.close(old)
		}
	}()
	if cfg.HasGroup(config.GroupRAG) && p.index == nil {
		p.index, err = search.Open(ctx, search.Options{Root: e.root, Sources: sources(cfg), DB: e.db, ProjectID: e.id, Logger: e.log, Links: e.policy, Embedder: e.embedder, Shared: e.shared, GitDir: e.gitDir()})
		if err != nil {
			return nil, fmt.Errorf("open search index: %w", err)
		}
	}
	if wantsWorkflow(cfg) && p.workflow == nil {
		// The engine answers for workflow files that are missing from the
		// search, as long as the rag group is on (e.Search says when not).
		p.workflow, err = workflow.Open(ctx, workflow.Options{Root: e.root, WorkflowsDir: cfg.RAG.WorkflowsPath, DB: e.db, ProjectID: e.id, Logger: e.log, Search: e, Lambdas: e.lambdas, Repository: e.repo})
		if err != nil {
			return nil, fmt.Errorf("open workflow engine: %w", err)
		}
	}
	if old != nil && old.index == p.index && old.workflow == p.workflow {
		p.catalog = old.catalog
	} else {
		p.catalog = newCatalog(e.root, p.index, p.workflow, e.log)
	}
	return p, nil
}

// close closes what p holds that keep (the parts taking over, or nil)
// does not.
func (p *parts) close(keep *parts) error {
	var errs []error
	if keep == nil || keep.catalog != p.catalog {
		p.catalog.close()
	}
	if p.index != nil && (keep == nil || keep.index != p.index) {
		errs = append(errs, p.index.Close())
	}
	if p.workflow != nil && (keep == nil || keep.workflow != p.workflow) {
		errs = append(errs, p.workflow.Close())
	}
	return errors.Join(errs...)
}

// addGroupTools registers on s the tools of p's groups and returns their
// names and each one's group.
func addGroupTools(s *mcp.Server, p *parts) ([]string, map[string]string) {
	var names []string
	groups := map[string]string{}
	if p.index != nil {
		search.AddTools(s, p.index)
		names = append(names, search.ToolName)
		groups[search.ToolName] = config.GroupRAG
	}
	if p.workflow != nil {
		for _, g := range []string{config.GroupWorkflow, config.GroupPOS} {
			for _, name := range workflow.AddTools(s, p.workflow, g == config.GroupWorkflow && p.cfg.HasGroup(g), g == config.GroupPOS && p.cfg.HasGroup(g)) {
				names = append(names, name)
				groups[name] = g
			}
		}
	}
	return names, groups
}

// reloadWorkflows reloads the definitions of the workflow engine of the
// moment when a batch touches the workflows folder, until ctx ends or
// changes closes.
func (e *Engine) reloadWorkflows(ctx context.Context, changes <-chan []string) {
	for {
		select {
		case <-ctx.Done():
			return
		case batch, ok := <-changes:
			if !ok {
				return
			}
			p := e.current()
			if p.workflow == nil {
				continue
			}
			for _, rel := range batch {
				if p.workflow.Relevant(filepath.Join(e.root, rel)) {
					p.workflow.Reload()
					p.catalog.workflowsChanged()
					break
				}
			}
		}
	}
}

// gitDir is the project's own git directory when its search is a view of
// its repository's shared index, else "".
func (e *Engine) gitDir() string {
	if e.shared == nil {
		return ""
	}
	return gitrepo.Identify(e.root).GitDir
}
