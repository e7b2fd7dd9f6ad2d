package workflow

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/berth-dev/berth/store"
)

// StateResult is the result of get_workflow_state: the stored session and
// what follows from it.
type StateResult struct {
	Session
	Progress         string         `json:"progress" jsonschema:"completed phases / total phases"`
	WorkflowComplete bool           `json:"workflow_complete"`
	PhaseName        string         `json:"phase_name,omitempty" jsonschema:"name of the current phase, when the workflow is defined"`
	Phases           []PhaseStatus  `json:"phases" jsonschema:"every phase of the session by number and name, generated phases included, with where the session stands"`
	Source           *SourceState   `json:"source,omitempty" jsonschema:"for a dynamic session: the file its phases came from"`
	Checkout         *CheckoutState `json:"checkout,omitempty" jsonschema:"the git worktree the session started in: its branch then and now"`
	Project          string         `json:"project,omitempty" jsonschema:"for a sibling worktree's session: the id of its project"`
	ReadOnly         bool           `json:"read_only,omitempty" jsonschema:"a sibling worktree's session: advance it through that worktree's Berth endpoint"`
	Warnings         []string       `json:"warnings,omitempty"`
}

// PhaseStatus is one phase of a session and where the session stands on it.
type PhaseStatus struct {
	PhaseSummary
	Status string `json:"status" jsonschema:"completed, skipped, current, failed (current, last attempt failed) or pending"`
}

// SourceState is what a dynamic session's phases came from.
type SourceState struct {
	File     string `json:"file"`
	Parser   string `json:"parser"`
	SHA256   string `json:"sha256"`
	ParsedAt string `json:"parsed_at"`
	// Changed is set when the file now differs from what was parsed: the
	// session keeps its phases; a new session would read the new file.
	Changed bool `json:"changed"`
}

// State returns the full state of a session.
func (e *Engine) State(ctx context.Context, sessionID string) (StateResult, error) {
	s, err := e.loadSession(ctx, sessionID)
	if errors.Is(err, ErrSessionElsewhere) {
		return e.siblingState(ctx, sessionID)
	}
	if err != nil {
		return StateResult{}, err
	}
	res := StateResult{Session: *s, Progress: s.progress(), WorkflowComplete: s.complete(), Phases: []PhaseStatus{}}
	if res.Checkout = e.moved(s); res.Checkout != nil && res.Checkout.Moved {
		res.Warnings = append(res.Warnings, res.Checkout.warning())
	}
	r, err := e.runFor(ctx, s)
	if err != nil {
		// The stored state stays readable when the definition is gone or broken.
		res.Warnings = append(res.Warnings, "phases not listed: "+oneLine(err))
		return res, nil
	}
	res.Session, res.Progress = *s, s.progress()
	for _, p := range r.phases() {
		ps := PhaseStatus{PhaseSummary: phaseSummary(&p), Status: phaseStatus(s, p.Number)}
		if p.Number == s.CurrentPhase && !res.WorkflowComplete {
			res.PhaseName = p.Name
		}
		res.Phases = append(res.Phases, ps)
	}
	if pl := s.Plan; pl != nil {
		res.Source = &SourceState{File: pl.Source, Parser: pl.Parser, SHA256: pl.SHA256, ParsedAt: timeText(pl.ParsedAt), Changed: e.sourceChanged(pl)}
		if res.Source.Changed {
			res.Warnings = append(res.Warnings, pl.Source+" changed since the session started: the session keeps the phases it started with; delete it and start again to use the new file")
		}
	}
	return res, nil
}

// siblingState is the stored state of a sibling worktree's session, read
// only: its phases are listed by that worktree, whose definitions it runs.
func (e *Engine) siblingState(ctx context.Context, sessionID string) (StateResult, error) {
	sib, s := e.elsewhere(ctx, sessionID)
	if s == nil {
		return StateResult{}, sessionNotFound(sessionID)
	}
	res := StateResult{Session: *s, Progress: s.progress(), WorkflowComplete: s.complete(), Phases: []PhaseStatus{},
		Project: sib.ProjectID, ReadOnly: true}
	res.Warnings = append(res.Warnings, "a session of the sibling worktree "+sib.Root+": read-only here; its phases are listed, and it is advanced, through that worktree's Berth endpoint")
	if s.Worktree != "" {
		res.Checkout = &CheckoutState{Worktree: s.Worktree, Branch: s.Branch, Commit: s.Commit, BranchNow: sib.Branch}
		if res.Checkout.Moved = sib.Branch != s.Branch && sib.Branch != ""; res.Checkout.Moved {
			res.Warnings = append(res.Warnings, res.Checkout.warning())
		}
	}
	return res, nil
}

func phaseStatus(s *Session, n int) string {
	switch {
	case slices.Contains(s.SkippedPhases, n):
		return "skipped"
	case s.hasCompleted(n):
		return "completed"
	case n == s.CurrentPhase && s.Checkpoints[phaseKey(n)] == CheckpointFailed:
		return "failed"
	case n == s.CurrentPhase:
		return "current"
	}
	return "pending"
}

// Session returns the summary of one session.
func (e *Engine) Session(ctx context.Context, sessionID string) (SessionSummary, error) {
	s, err := e.loadSession(ctx, sessionID)
	if err != nil {
		return SessionSummary{}, err
	}
	return sessionSummary(s), nil
}

// SessionList is the result of list_workflow_sessions.
type SessionList struct {
	Sessions []SessionSummary `json:"sessions"`
	Count    int              `json:"count"`
	// Scope and Worktrees are set for scope repository: the sibling
	// worktrees whose sessions the listing read.
	Scope     string         `json:"scope,omitempty"`
	Worktrees []WorktreeInfo `json:"worktrees,omitempty" jsonschema:"with scope repository: the sibling worktrees read, each with what it has checked out"`
}

// Session list filters.
const (
	FilterAll = "all"
)

// Sessions lists the project's sessions, most recently updated first.
// status filters: "" or "all" for every session, "active" or "completed".
func (e *Engine) Sessions(ctx context.Context, status string) (SessionList, error) {
	return e.SessionsIn(ctx, status, ScopeProject)
}

// SessionsIn lists the sessions of scope, most recently updated first:
// the project's ("" or project), or with repository those of the sibling
// worktrees of its git repository too, read-only.
func (e *Engine) SessionsIn(ctx context.Context, status, scope string) (SessionList, error) {
	if err := e.ready(ctx); err != nil {
		return SessionList{}, err
	}
	scope = strings.ToLower(strings.TrimSpace(scope))
	switch scope {
	case "", ScopeProject, ScopeRepository:
	default:
		return SessionList{}, newError(ErrInvalidArgument, "pass scope project (the default) or repository",
			"unknown scope %q", scope)
	}
	status = strings.ToLower(strings.TrimSpace(status))
	switch status {
	case "", FilterAll, StatusActive, StatusCompleted:
	default:
		return SessionList{}, newError(ErrInvalidArgument, "pass status active, completed or all (or leave it out)",
			"unknown status filter %q", status)
	}
	out := SessionList{Sessions: []SessionSummary{}}
	err := e.area.View(func(b *store.Bucket) error {
		return eachSummary(b, func(s SessionSummary) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if status == "" || status == FilterAll || s.Status == status {
				out.Sessions = append(out.Sessions, s)
			}
			return nil
		}, func(id string, err error) {
			e.log.Warn("undecodable session record skipped", "session", id, "err", err)
		})
	})
	if err != nil {
		return SessionList{}, err
	}
	if scope == ScopeRepository {
		out.Scope = ScopeRepository
		mounted := true
		for i := range out.Sessions {
			out.Sessions[i].Project, out.Sessions[i].Mounted = e.projectID, &mounted
		}
		out.Worktrees = []WorktreeInfo{}
		if err := e.siblingSessions(ctx, status, &out); err != nil {
			return SessionList{}, err
		}
	}
	sortSessions(out.Sessions)
	out.Count = len(out.Sessions)
	return out, nil
}

// DeleteResult is the result of delete_workflow_session.
type DeleteResult struct {
	SessionID    string `json:"session_id"`
	Deleted      bool   `json:"deleted"`
	WorkflowType string `json:"workflow_type"`
	TargetFile   string `json:"target_file"`
}

// DeleteSession removes a session and its progress.
func (e *Engine) DeleteSession(ctx context.Context, sessionID string) (DeleteResult, error) {
	if err := e.ready(ctx); err != nil {
		return DeleteResult{}, err
	}
	if err := checkSessionID(sessionID); err != nil {
		return DeleteResult{}, err
	}
	var res DeleteResult
	err := e.update(func(b *store.Bucket) error {
		s, err := getSession(b, sessionID)
		if err != nil {
			return err
		}
		if s == nil {
			return sessionNotFound(sessionID)
		}
		res = DeleteResult{SessionID: s.SessionID, Deleted: true, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile}
		return deleteSession(b, s)
	})
	if errors.Is(err, ErrSessionNotFound) {
		return DeleteResult{}, e.notHere(ctx, sessionID)
	}
	if err != nil {
		return DeleteResult{}, err
	}
	e.log.Info("workflow session deleted", "session", sessionID)
	return res, nil
}
