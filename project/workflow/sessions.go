package workflow

import (
	"context"
	"slices"
	"strings"

	"github.com/berth-dev/berth/store"
)

// StateResult is the result of get_workflow_state: the stored session and
// what follows from it.
type StateResult struct {
	Session
	Progress         string `json:"progress" jsonschema:"completed phases / total phases"`
	WorkflowComplete bool   `json:"workflow_complete"`
	PhaseName        string `json:"phase_name,omitempty" jsonschema:"name of the current phase, when the workflow is defined"`
}

// State returns the full state of a session.
func (e *Engine) State(ctx context.Context, sessionID string) (StateResult, error) {
	s, err := e.loadSession(ctx, sessionID)
	if err != nil {
		return StateResult{}, err
	}
	res := StateResult{Session: *s, Progress: s.progress(), WorkflowComplete: s.complete()}
	if w := e.workflow(s.WorkflowType); w != nil && !res.WorkflowComplete {
		if p, ok := w.Phase(s.CurrentPhase); ok {
			res.PhaseName = p.Name
		}
	}
	return res, nil
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
}

// Session list filters.
const (
	FilterAll = "all"
)

// Sessions lists the project's sessions, most recently updated first.
// status filters: "" or "all" for every session, "active" or "completed".
func (e *Engine) Sessions(ctx context.Context, status string) (SessionList, error) {
	if err := e.ready(ctx); err != nil {
		return SessionList{}, err
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
		return eachSession(b, func(s *Session) error {
			if status == "" || status == FilterAll || s.Status == status {
				out.Sessions = append(out.Sessions, sessionSummary(s))
			}
			return nil
		}, func(id string, err error) {
			e.log.Warn("undecodable session record skipped", "session", id, "err", err)
		})
	})
	if err != nil {
		return SessionList{}, err
	}
	slices.SortStableFunc(out.Sessions, func(a, b SessionSummary) int { return strings.Compare(b.UpdatedAt, a.UpdatedAt) })
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
	err := e.area.Update(func(b *store.Bucket) error {
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
	if err != nil {
		return DeleteResult{}, err
	}
	e.log.Info("workflow session deleted", "session", sessionID)
	return res, nil
}
