package mounttable

import (
	"slices"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/store"
)

// repoApprovals decides a worktree's project-declared servers with the
// approvals of its sibling worktrees too: a definition approved in one
// worktree of a repository runs in another when it is the same there (the
// same digest, the same files with the same contents, told its own root).
// A worktree whose branch changed the definition or its files waits for
// its own approval, and the change is named against the sibling's.
type repoApprovals struct {
	own  *hosted.Approvals
	db   *store.DB
	repo string // the repository's id; "" for a project in none
}

// approvalsFor is the approval checker of the project whose repository
// identity is id.
func approvalsFor(own *hosted.Approvals, db *store.DB, id gitrepo.Identity) hosted.ApprovalChecker {
	if !id.Member() {
		return own
	}
	return repoApprovals{own: own, db: db, repo: id.ID}
}

// Check is the project's own approval when it has one; else a sibling
// worktree's that covers the same definition; else the project's own
// answer, or, when it never approved the server, what differs from a
// sibling's approval.
func (r repoApprovals) Check(projectID, root, name string, s config.Server, d *api.ServerDefinition) (hosted.Approval, error) {
	a, err := r.own.Check(projectID, root, name, s, d)
	if err != nil || a.State == hosted.ApprovalApproved {
		return a, err
	}
	for _, sib := range r.siblings(projectID) {
		sa, err := r.own.Check(sib.ID, sib.Root, name, s, rooted(d, root, sib.Root))
		switch {
		case err != nil:
		case sa.State == hosted.ApprovalApproved:
			return sa, nil
		case sa.State == hosted.ApprovalChanged && a.State == hosted.ApprovalNever:
			for i, c := range sa.Changed {
				sa.Changed[i] = c + " (against its approval in the worktree " + sib.Root + ")"
			}
			a = sa
		}
	}
	return a, nil
}

// siblings are the other worktrees of the repository berth.db knows.
func (r repoApprovals) siblings(projectID string) []store.ProjectRecord {
	recs, _, err := r.db.Projects()
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(recs, func(rec store.ProjectRecord) bool { return rec.Repository != r.repo || rec.ID == projectID })
}

// rooted is d as the worktree at sib would see it: the roots it is told
// name sib where they name root.
func rooted(d *api.ServerDefinition, root, sib string) *api.ServerDefinition {
	if d == nil {
		return nil
	}
	c := *d
	c.Roots = slices.Clone(d.Roots)
	for i, r := range c.Roots {
		if r == root {
			c.Roots[i] = sib
		}
	}
	return &c
}
