package workflow

import (
	"context"
	"encoding/json"

	"github.com/berth-dev/berth/store"
	"github.com/google/uuid"
)

const maxOptionsBytes = 64 << 10

// StartResult is the result of start_workflow.
type StartResult struct {
	SessionID    string     `json:"session_id"`
	WorkflowType string     `json:"workflow_type"`
	TargetFile   string     `json:"target_file"`
	Resumed      bool       `json:"resumed" jsonschema:"true when an active session for this workflow and target was resumed"`
	CurrentPhase int        `json:"current_phase"`
	FirstPhase   int        `json:"first_phase"`
	TotalPhases  int        `json:"total_phases"`
	Phase        *PhaseView `json:"phase" jsonschema:"the current phase"`
}

// Start starts workflowType on targetFile, or resumes the active session for
// the same pair. The lookup and the creation share one store transaction, so
// two clients starting at once get the same session.
func (e *Engine) Start(ctx context.Context, workflowType, targetFile string, options map[string]any) (StartResult, error) {
	if err := e.ready(ctx); err != nil {
		return StartResult{}, err
	}
	w, err := e.runnable(workflowType)
	if err != nil {
		return StartResult{}, err
	}
	target, err := cleanTarget(e.root, targetFile)
	if err != nil {
		return StartResult{}, err
	}
	if raw, _ := json.Marshal(options); len(raw) > maxOptionsBytes {
		return StartResult{}, newError(ErrInvalidArgument, "pass small options; keep large inputs in files and pass their paths",
			"options are %d bytes; the limit is %d", len(raw), maxOptionsBytes)
	}
	var s *Session
	resumed := false
	err = e.area.Update(func(b *store.Bucket) error {
		cur, err := activeSession(b, workflowType, target)
		if err != nil {
			return err
		}
		if cur != nil {
			s, resumed = cur, true
			return nil
		}
		now := e.now()
		s = &Session{
			SessionID: uuid.NewString(), WorkflowType: workflowType, TargetFile: target,
			CurrentPhase: w.FirstPhase, FirstPhase: w.FirstPhase, TotalPhases: w.TotalPhases(),
			CreatedAt: now, UpdatedAt: now, Status: StatusActive, Options: options,
		}
		s.Checkpoints = map[string]CheckpointStatus{phaseKey(w.FirstPhase): CheckpointPending}
		return putSession(b, s)
	})
	if err != nil {
		return StartResult{}, err
	}
	if resumed {
		e.log.Info("workflow resumed", "session", s.SessionID, "workflow", workflowType, "target", target, "phase", s.CurrentPhase)
	} else {
		e.log.Info("workflow started", "session", s.SessionID, "workflow", workflowType, "target", target)
	}
	view, err := phaseView(w, s.CurrentPhase, s)
	if err != nil {
		return StartResult{}, err
	}
	return StartResult{
		SessionID: s.SessionID, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile, Resumed: resumed,
		CurrentPhase: s.CurrentPhase, FirstPhase: s.FirstPhase, TotalPhases: w.TotalPhases(), Phase: view,
	}, nil
}
