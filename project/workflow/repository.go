package workflow

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/berth-dev/berth/store"
)

// Repository is the git repository a project is a confirmed worktree of,
// as the broker knows it (Options.Repository).
type Repository interface {
	// Checkout is what the project's worktree has checked out now.
	Checkout() Checkout
	// Siblings are the repository's other worktrees whose sessions
	// berth.db holds, each confirmed a worktree of the same repository.
	// It runs under no lock or transaction another project needs.
	Siblings(ctx context.Context) ([]Sibling, error)
}

// Checkout is what a worktree has checked out.
type Checkout struct {
	Root   string // the worktree's root
	Branch string // empty when detached
	Commit string // empty for an unborn branch
}

// Sibling is another worktree of the project's repository.
type Sibling struct {
	ProjectID string
	Root      string
	Branch    string // what it has checked out now; empty when detached or unknown
	Mounted   bool   // served by the broker now
}

// Scopes of list_workflow_sessions.
const (
	ScopeProject    = "project"
	ScopeRepository = "repository"
)

// ErrSessionElsewhere is a session of a sibling worktree given to a tool
// that changes sessions: it is read-only from here.
var ErrSessionElsewhere = fmt.Errorf("%w: the session belongs to another worktree", ErrSessionNotFound)

// SessionsChanged is closed when a session of the project is started,
// advanced, imported or deleted; call it again for the next change.
func (e *Engine) SessionsChanged() <-chan struct{} {
	e.changedMu.Lock()
	defer e.changedMu.Unlock()
	return e.changed
}

// update runs fn in a store transaction on the project's area and, once it
// committed, tells SessionsChanged's callers.
func (e *Engine) update(fn func(*store.Bucket) error) error {
	if err := e.area.Update(fn); err != nil {
		return err
	}
	e.changedMu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.changedMu.Unlock()
	return nil
}

// checkout is what the project's worktree has checked out now; the zero
// Checkout outside a repository. It reads files: never call it inside a
// transaction.
func (e *Engine) checkout() Checkout {
	if e.repo == nil {
		return Checkout{}
	}
	return e.repo.Checkout()
}

// siblingSessions adds to out the sessions of the project's sibling
// worktrees that status admits, each read in a short transaction of its own.
func (e *Engine) siblingSessions(ctx context.Context, status string, out *SessionList) error {
	if e.repo == nil {
		return nil
	}
	sibs, err := e.repo.Siblings(ctx)
	if err != nil {
		return fmt.Errorf("list the sibling worktrees: %w", err)
	}
	for _, sib := range sibs {
		mounted := sib.Mounted
		err := e.db.Area(sib.ProjectID, areaName).View(func(b *store.Bucket) error {
			return eachSummary(b, func(s SessionSummary) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				if status == "" || status == FilterAll || s.Status == status {
					s.Project, s.ReadOnly, s.Mounted = sib.ProjectID, true, &mounted
					if s.Worktree == "" {
						s.Worktree = sib.Root
					}
					out.Sessions = append(out.Sessions, s)
				}
				return nil
			}, func(id string, err error) {
				e.log.Warn("undecodable session record of a sibling worktree skipped", "project", sib.ProjectID, "session", id, "err", err)
			})
		})
		if err != nil {
			return fmt.Errorf("read the sessions of the worktree %s: %w", sib.Root, err)
		}
		out.Worktrees = append(out.Worktrees, WorktreeInfo{Project: sib.ProjectID, Root: sib.Root, Branch: sib.Branch, Mounted: sib.Mounted})
	}
	return nil
}

// elsewhere looks session id up in the sibling worktrees: the sibling
// holding it and the session, or nil.
func (e *Engine) elsewhere(ctx context.Context, id string) (*Sibling, *Session) {
	if e.repo == nil {
		return nil, nil
	}
	sibs, err := e.repo.Siblings(ctx)
	if err != nil {
		e.log.Warn("list the sibling worktrees", "err", err)
		return nil, nil
	}
	for i := range sibs {
		var s *Session
		err := e.db.Area(sibs[i].ProjectID, areaName).View(func(b *store.Bucket) error {
			var err error
			s, err = getSession(b, id)
			return err
		})
		if err == nil && s != nil {
			return &sibs[i], s
		}
	}
	return nil, nil
}

// readOnlyHere is the error of a tool that would change the session of
// sibling sib: it names the worktree to call it in.
func readOnlyHere(id string, sib *Sibling) error {
	where := sib.Root
	if sib.Branch != "" {
		where += " (branch " + sib.Branch + ")"
	}
	fix := "call it through the Berth endpoint of the worktree " + sib.Root
	if !sib.Mounted {
		fix = "open the worktree " + sib.Root + " in an IDE or run `berth attach " + sib.Root + "`, then call it through that worktree's Berth endpoint"
	}
	return newError(ErrSessionElsewhere, fix,
		"session %q belongs to the sibling worktree %s (project %s): it is read-only from this worktree", id, where, sib.ProjectID)
}

// WorktreeInfo is a sibling worktree in a listing of scope repository.
type WorktreeInfo struct {
	Project string `json:"project"`
	Root    string `json:"root"`
	Branch  string `json:"branch,omitempty" jsonschema:"what it has checked out now; empty when detached"`
	Mounted bool   `json:"mounted"`
}

// moved says how the worktree of s has moved since s started: nil when
// it has not, or when s recorded no checkout.
func (e *Engine) moved(s *Session) *CheckoutState {
	if s.Worktree == "" || e.repo == nil {
		return nil
	}
	now := e.checkout()
	st := &CheckoutState{Worktree: s.Worktree, Branch: s.Branch, Commit: s.Commit, BranchNow: now.Branch, CommitNow: now.Commit}
	st.Moved = now.Branch != s.Branch && (now.Branch != "" || now.Commit != "")
	return st
}

// CheckoutState is where a session's worktree stands against where it
// stood when the session started.
type CheckoutState struct {
	Worktree  string `json:"worktree"`
	Branch    string `json:"branch" jsonschema:"the branch at start; empty when detached"`
	Commit    string `json:"commit,omitempty" jsonschema:"the commit at start"`
	BranchNow string `json:"branch_now" jsonschema:"the branch checked out now; empty when detached"`
	CommitNow string `json:"commit_now,omitempty"`
	Moved     bool   `json:"moved_to_another_branch"`
}

func (c *CheckoutState) warning() string {
	name := func(branch, commit string) string {
		if branch != "" {
			return "branch " + branch
		}
		if len(commit) > 12 {
			commit = commit[:12]
		}
		return strings.TrimSpace("a detached HEAD " + commit)
	}
	return fmt.Sprintf("the worktree %s has moved from %s, where this session started, to %s: its phases' evidence may describe the other branch",
		c.Worktree, name(c.Branch, c.Commit), name(c.BranchNow, c.CommitNow))
}

// sortSessions orders a listing most recently updated first.
func sortSessions(list []SessionSummary) {
	slices.SortStableFunc(list, func(a, b SessionSummary) int { return strings.Compare(b.UpdatedAt, a.UpdatedAt) })
}
