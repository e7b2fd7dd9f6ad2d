package workflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/store"
)

const maxSessionIDLen = 128

// checkSessionID refuses ids that no session can have.
func checkSessionID(id string) error {
	ok := id != "" && len(id) <= maxSessionIDLen
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			ok = false
			break
		}
	}
	if !ok {
		return newError(ErrInvalidArgument, "pass the session_id that start_workflow returned (list them with list_workflow_sessions)",
			"session_id %q is not a session id", id)
	}
	return nil
}

// loadSession reads one session of this project.
func (e *Engine) loadSession(ctx context.Context, id string) (*Session, error) {
	if err := e.ready(ctx); err != nil {
		return nil, err
	}
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	var s *Session
	err := e.area.View(func(b *store.Bucket) error {
		var err error
		s, err = getSession(b, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, sessionNotFound(id)
	}
	return s, nil
}

// PhaseResult is the result of get_current_phase.
type PhaseResult struct {
	SessionID        string     `json:"session_id"`
	WorkflowType     string     `json:"workflow_type"`
	TargetFile       string     `json:"target_file"`
	CurrentPhase     int        `json:"current_phase"`
	TotalPhases      int        `json:"total_phases"`
	CompletedPhases  []int      `json:"completed_phases"`
	WorkflowComplete bool       `json:"workflow_complete"`
	Phase            *PhaseView `json:"phase" jsonschema:"the current phase; null when the workflow is complete"`
}

// CurrentPhase returns the session's current phase with its content.
func (e *Engine) CurrentPhase(ctx context.Context, sessionID string) (PhaseResult, error) {
	s, err := e.loadSession(ctx, sessionID)
	if err != nil {
		return PhaseResult{}, err
	}
	res := PhaseResult{
		SessionID: s.SessionID, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile,
		CurrentPhase: s.CurrentPhase, TotalPhases: s.TotalPhases, CompletedPhases: s.CompletedPhases,
		WorkflowComplete: s.complete(),
	}
	if res.WorkflowComplete {
		return res, nil
	}
	w, err := e.runnable(s.WorkflowType)
	if err != nil {
		return PhaseResult{}, err
	}
	res.Phase, err = phaseView(w, s.CurrentPhase, s)
	if err != nil {
		return PhaseResult{}, err
	}
	return res, nil
}

// TaskResult is the result of get_task.
type TaskResult struct {
	SessionID  string `json:"session_id"`
	Phase      int    `json:"phase"`
	PhaseName  string `json:"phase_name"`
	TaskNumber int    `json:"task_number"`
	Name       string `json:"name"`
	Purpose    string `json:"purpose,omitempty"`
	File       string `json:"file"`
	Content    string `json:"content" jsonschema:"the task file's text"`
}

// Task returns a task of the current phase or of a completed one; later
// phases stay locked.
func (e *Engine) Task(ctx context.Context, sessionID string, phase, taskNumber int) (TaskResult, error) {
	s, err := e.loadSession(ctx, sessionID)
	if err != nil {
		return TaskResult{}, err
	}
	if phase != s.CurrentPhase && !s.hasCompleted(phase) {
		if phase > s.CurrentPhase {
			return TaskResult{}, newError(ErrPhaseLocked, "finish the current phase with complete_phase first; get_current_phase shows it",
				"phase %d is not reached yet: the session is at phase %d", phase, s.CurrentPhase)
		}
		return TaskResult{}, newError(ErrPhaseNotFound, "call get_current_phase to see the session's phases",
			"phase %d is neither the current phase (%d) nor a completed one", phase, s.CurrentPhase)
	}
	w, err := e.runnable(s.WorkflowType)
	if err != nil {
		return TaskResult{}, err
	}
	p, ok := w.Phase(phase)
	if !ok {
		return TaskResult{}, newError(ErrPhaseNotFound, "the workflow definition changed under the session; list its phases with list_workflows",
			"workflow %q has no phase %d", w.Type, phase)
	}
	t, ok := p.Task(taskNumber)
	if !ok {
		nums := make([]string, 0, len(p.Tasks))
		for _, t := range p.Tasks {
			nums = append(nums, fmt.Sprint(t.Number))
		}
		avail := "it has no tasks"
		if len(nums) > 0 {
			avail = "its tasks are " + strings.Join(nums, ", ")
		}
		return TaskResult{}, newError(ErrTaskNotFound, "pass a task_number listed by get_current_phase",
			"phase %d has no task %d: %s", phase, taskNumber, avail)
	}
	content, err := w.ReadFile(t.File)
	if err != nil {
		return TaskResult{}, newError(ErrWorkflowBroken, "restore the file, or fix the workflow definition",
			"read %s of workflow %q: %v", t.File, w.Type, err)
	}
	return TaskResult{
		SessionID: s.SessionID, Phase: phase, PhaseName: p.Name, TaskNumber: t.Number,
		Name: t.Name, Purpose: t.Purpose, File: t.File, Content: content,
	}, nil
}
