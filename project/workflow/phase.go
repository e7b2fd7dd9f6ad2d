package workflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/project/workflow/dynamic"
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
		return nil, e.notHere(ctx, id)
	}
	return s, nil
}

// notHere is the error for a session id this project does not hold: a
// sibling worktree's session is read-only here, and the error names the
// worktree to use; any other id is not found.
func (e *Engine) notHere(ctx context.Context, id string) error {
	if sib, _ := e.elsewhere(ctx, id); sib != nil {
		return readOnlyHere(id, sib)
	}
	return sessionNotFound(id)
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
	r, err := e.runFor(ctx, s)
	if err != nil {
		return PhaseResult{}, err
	}
	res.TotalPhases = s.TotalPhases
	res.Phase, err = e.phaseView(ctx, r, s.CurrentPhase, s)
	if err != nil {
		return PhaseResult{}, err
	}
	return res, nil
}

// TaskResult is the result of get_task.
type TaskResult struct {
	SessionID          string   `json:"session_id"`
	Phase              int      `json:"phase"`
	PhaseName          string   `json:"phase_name"`
	TaskNumber         int      `json:"task_number"`
	TaskID             string   `json:"task_id,omitempty" jsonschema:"the spec's id of a generated task, such as 1.2"`
	Name               string   `json:"name"`
	Purpose            string   `json:"purpose,omitempty"`
	File               string   `json:"file"`
	EstimatedTime      string   `json:"estimated_time,omitempty"`
	Dependencies       []string `json:"dependencies,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	Content            string   `json:"content" jsonschema:"the task file's text (the rendered task template of a generated task)"`
	Source             string   `json:"source" jsonschema:"where content comes from: file, template or search (the task file is missing)"`
	Warnings           []string `json:"warnings,omitempty"`
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
	r, err := e.runFor(ctx, s)
	if err != nil {
		return TaskResult{}, err
	}
	p, ok := r.phase(phase)
	if !ok {
		return TaskResult{}, r.phaseNotFound(phase)
	}
	t, ok := p.Task(taskNumber)
	if !ok {
		return TaskResult{}, noTask(p, taskNumber)
	}
	res := TaskResult{
		SessionID: s.SessionID, Phase: phase, PhaseName: p.Name, TaskNumber: t.Number,
		Name: t.Name, Purpose: t.Purpose, File: t.File,
	}
	if g := t.Generated; g != nil {
		res.TaskID, res.EstimatedTime, res.Dependencies, res.AcceptanceCriteria = g.ID, g.EstimatedTime, g.Dependencies, g.AcceptanceCriteria
	}
	res.Content, res.Source, res.Warnings, err = e.taskContent(ctx, r.w, p, t)
	return res, err
}

// taskContent reads a task: its file, its rendered template, or, when the
// file is missing, what the standards search finds for it.
func (e *Engine) taskContent(ctx context.Context, w *definition.Workflow, p *definition.Phase, t *definition.Task) (string, string, []string, error) {
	switch {
	case t.Generated != nil:
		tmpl, err := w.ReadFile(t.File)
		if err != nil {
			return "", "", nil, readError(w, t.File, err)
		}
		content, err := dynamic.RenderTask(ctx, tmpl, *p.Generated, p.Number, *t.Generated, t.Number)
		if err != nil {
			return "", "", nil, renderError(w, t.File, err)
		}
		return content, SourceTemplate, nil, nil
	case !t.Missing:
		content, err := w.ReadFile(t.File)
		if err != nil {
			return "", "", nil, readError(w, t.File, err)
		}
		return content, SourceFile, nil, nil
	}
	file := t.File
	if file == "" {
		file = fmt.Sprintf("the file of task %d of phase %d", t.Number, p.Number)
	}
	query := fmt.Sprintf("%s phase %d task %d %s %s", w.Type, p.Number, t.Number, t.Name, t.Purpose)
	found, ok, why := e.fromSearch(ctx, query)
	if !ok {
		content := fmt.Sprintf("# Task %d: %s\n\nThis task has no file in workflow %q, and %s.\n", t.Number, t.Name, w.Type, why)
		if t.Purpose != "" {
			content += "\nPurpose: " + t.Purpose + "\n"
		}
		return content, SourceSearch, []string{fmt.Sprintf("%s is missing; %s: only the task's name is known", file, why)}, nil
	}
	return found, SourceSearch, []string{fmt.Sprintf("%s is missing from workflow %q: the content below is what the standards search found for this task", file, w.Type)}, nil
}

func noTask(p *definition.Phase, taskNumber int) error {
	nums := make([]string, 0, len(p.Tasks))
	for _, t := range p.Tasks {
		nums = append(nums, fmt.Sprint(t.Number))
	}
	avail := "it has no tasks"
	if len(nums) > 0 {
		avail = "its tasks are " + strings.Join(nums, ", ")
	}
	return newError(ErrTaskNotFound, "pass a task_number listed by get_current_phase",
		"phase %d has no task %d: %s", p.Number, taskNumber, avail)
}
