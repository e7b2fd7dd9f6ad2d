package mounttable

import (
	"context"
	"fmt"

	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/berth-dev/berth/store"
)

// repoSessions is a mounted worktree's git repository as its workflow
// engine sees it: what the worktree has checked out, which sessions record
// at start, and its sibling worktrees, whose sessions list_workflow_sessions
// reads with scope repository.
type repoSessions struct {
	table *Table
	id    string // the worktree's project
	root  string
	repo  *repoView
}

// workflowRepository is what the workflow engine of the project at root
// is told of its repository; nil for a root that is no confirmed worktree.
func (table *Table) workflowRepository(id, root string, repo *repoView) workflow.Repository {
	if !repo.id.Member() {
		return nil
	}
	return repoSessions{table: table, id: id, root: root, repo: repo}
}

// Checkout is the worktree's branch and commit (read again at most every
// headTTL).
func (r repoSessions) Checkout() workflow.Checkout {
	d := r.repo.describe()
	if d == nil {
		return workflow.Checkout{}
	}
	return workflow.Checkout{Root: r.root, Branch: d.Branch, Commit: d.Commit}
}

// Siblings are the repository's other worktrees berth.db holds a project
// of, mounted or not. A mounted one was confirmed a worktree of the
// repository when it was mounted; one that is not is confirmed again from
// its files now, and left out when it no longer is one (its .git gone or
// naming another repository). The registry is read in its own short
// transaction and the table's lock is held only to copy which
// siblings are mounted: every file is read outside both.
func (r repoSessions) Siblings(ctx context.Context) ([]workflow.Sibling, error) {
	recs, _, err := r.table.db.Projects()
	if err != nil {
		return nil, fmt.Errorf("read the registry: %w", err)
	}
	repoID := r.repo.id.ID
	type candidate struct {
		rec  store.ProjectRecord
		view *repoView // nil: not mounted
	}
	var cands []candidate
	r.table.mu.Lock()
	for _, rec := range recs {
		if rec.Repository != repoID || rec.ID == r.id {
			continue
		}
		c := candidate{rec: rec}
		if sl := r.table.slots[rec.ID]; sl != nil && sl.m != nil {
			c.view = sl.m.repo
		}
		cands = append(cands, c)
	}
	r.table.mu.Unlock()

	var out []workflow.Sibling
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sib := workflow.Sibling{ProjectID: c.rec.ID, Root: c.rec.Root, Mounted: c.view != nil}
		if c.view != nil {
			if c.view.id.ID != repoID {
				continue
			}
			if d := c.view.describe(); d != nil {
				sib.Branch = d.Branch
			}
		} else {
			id := gitrepo.Identify(c.rec.Root)
			if id.ID != repoID {
				r.table.log.Debug("a worktree berth.db records is no longer one of the repository: its sessions are not listed",
					"project", c.rec.ID, "root", c.rec.Root, "why", id.Why)
				continue
			}
			if h, err := gitrepo.ReadHead(id.GitDir, id.CommonDir); err == nil {
				sib.Branch = h.Branch
			}
		}
		out = append(out, sib)
	}
	return out, nil
}
