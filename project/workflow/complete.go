package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/store"
)

// MaxEvidenceBytes is the largest evidence (as JSON) complete_phase accepts.
const MaxEvidenceBytes = 1 << 20

// CompleteResult is the result of complete_phase.
type CompleteResult struct {
	SessionID        string           `json:"session_id"`
	Phase            int              `json:"phase"`
	CheckpointPassed bool             `json:"checkpoint_passed"`
	CheckpointStatus CheckpointStatus `json:"checkpoint_status" jsonschema:"passed or failed"`
	Strict           bool             `json:"strict" jsonschema:"whether the phase's gate blocks on errors"`
	Errors           []string         `json:"errors" jsonschema:"why a strict gate failed"`
	Warnings         []string         `json:"warnings" jsonschema:"problems that did not block (all problems of a non-strict gate)"`
	FieldsMissing    []string         `json:"fields_missing"`
	CurrentPhase     int              `json:"current_phase"`
	NextPhase        *int             `json:"next_phase" jsonschema:"the phase now current; null when the phase did not advance or the workflow is complete"`
	NextPhaseContent *PhaseView       `json:"next_phase_content"`
	WorkflowComplete bool             `json:"workflow_complete"`
}

// CompletePhase submits evidence for the session's current phase. The check
// of the session's state and the write of the outcome happen in one store
// transaction, so that of concurrent calls for one phase exactly one
// advances and the others get ErrPhaseCompleted. A strict gate that fails
// records "failed" with the evidence and does not advance; a non-strict gate
// passes and reports its problems as warnings.
func (e *Engine) CompletePhase(ctx context.Context, sessionID string, phase int, evidence map[string]any) (CompleteResult, error) {
	if err := e.ready(ctx); err != nil {
		return CompleteResult{}, err
	}
	if err := checkSessionID(sessionID); err != nil {
		return CompleteResult{}, err
	}
	if evidence == nil {
		evidence = map[string]any{}
	}
	raw, err := json.Marshal(evidence)
	if err != nil {
		return CompleteResult{}, newError(ErrInvalidArgument, "pass evidence as a JSON object", "evidence is not JSON: %v", err)
	}
	if len(raw) > MaxEvidenceBytes {
		return CompleteResult{}, newError(ErrEvidenceTooLarge,
			"summarize: pass counts, short texts and file paths instead of file contents or full logs",
			"evidence is %s; the limit is 1 MiB", sizeText(len(raw)))
	}
	// Decode the JSON again so that Go callers' values (ints, []string) are
	// checked and stored exactly as a JSON client's would be.
	evidence = map[string]any{}
	if err := json.Unmarshal(raw, &evidence); err != nil {
		return CompleteResult{}, newError(ErrInvalidArgument, "pass evidence as a JSON object", "evidence is not a JSON object: %v", err)
	}
	var (
		res CompleteResult
		w   *definition.Workflow
	)
	err = e.area.Update(func(b *store.Bucket) error {
		s, err := getSession(b, sessionID)
		if err != nil {
			return err
		}
		if s == nil {
			return sessionNotFound(sessionID)
		}
		if w, err = e.runnable(s.WorkflowType); err != nil {
			return err
		}
		if err := checkCompletable(s, phase); err != nil {
			return err
		}
		p, ok := w.Phase(phase)
		if !ok {
			return newError(ErrPhaseNotFound, "the workflow definition changed under the session; list its phases with list_workflows",
				"workflow %q has no phase %d", w.Type, phase)
		}
		res = e.apply(s, w, p, evidence)
		return putSession(b, s)
	})
	if err != nil {
		return CompleteResult{}, err
	}
	e.log.Info("phase submitted", "session", sessionID, "workflow", w.Type, "phase", phase,
		"passed", res.CheckpointPassed, "complete", res.WorkflowComplete)
	if res.NextPhase != nil {
		if res.NextPhaseContent, err = phaseView(w, *res.NextPhase, nil); err != nil {
			// The advance is stored; the client can fetch the phase again.
			e.log.Warn("read next phase", "session", sessionID, "phase", *res.NextPhase, "err", err)
		}
	}
	return res, nil
}

// checkCompletable says why phase cannot be completed now, if it cannot.
func checkCompletable(s *Session, phase int) error {
	switch {
	case s.hasCompleted(phase):
		return newError(ErrPhaseCompleted, "call get_current_phase to see where the session is now",
			"phase %d already completed (the session is at %s)", phase, position(s))
	case s.complete():
		return newError(ErrWorkflowComplete, "start a new session with start_workflow to run the workflow again",
			"workflow %q is already complete for %q", s.WorkflowType, s.TargetFile)
	case phase != s.CurrentPhase:
		return newError(ErrWrongPhase, "complete the current phase first; get_current_phase shows it",
			"phase %d is not the current phase: the session is at phase %d", phase, s.CurrentPhase)
	}
	return nil
}

// apply checks the evidence against the phase's gate and records the
// outcome in s.
func (e *Engine) apply(s *Session, w *definition.Workflow, p *definition.Phase, evidence map[string]any) CompleteResult {
	check := p.Gate.Check(evidence)
	res := CompleteResult{
		SessionID: s.SessionID, Phase: p.Number, Strict: p.Gate.Strict,
		Errors: check.Errors, Warnings: check.Warnings, FieldsMissing: check.FieldsMissing,
	}
	if !p.Gate.Strict && len(check.Errors) > 0 {
		res.Warnings = append(append([]string{}, check.Errors...), check.Warnings...)
		res.Errors = []string{}
	}
	res.CheckpointPassed = len(res.Errors) == 0
	now := e.now()
	key := phaseKey(p.Number)
	prev := s.PhaseArtifacts[key]
	s.PhaseArtifacts[key] = Artifact{Evidence: evidence, Timestamp: now, Attempts: prev.Attempts + 1}
	s.UpdatedAt = now
	s.FirstPhase, s.TotalPhases = w.FirstPhase, w.TotalPhases()
	if !res.CheckpointPassed {
		s.Checkpoints[key] = CheckpointFailed
		res.CheckpointStatus = CheckpointFailed
		res.CurrentPhase = s.CurrentPhase
		return res
	}
	s.Checkpoints[key] = CheckpointPassed
	res.CheckpointStatus = CheckpointPassed
	s.CompletedPhases = append(s.CompletedPhases, p.Number)
	s.CurrentPhase = p.Number + 1
	s.updateStatus()
	res.CurrentPhase = s.CurrentPhase
	res.WorkflowComplete = s.complete()
	if !res.WorkflowComplete {
		next := s.CurrentPhase
		res.NextPhase = &next
		s.Checkpoints[phaseKey(next)] = CheckpointPending
	}
	return res
}

// position describes where a session is, for messages.
func position(s *Session) string {
	if s.complete() {
		return "the end: the workflow is complete"
	}
	return fmt.Sprintf("phase %d", s.CurrentPhase)
}

func sizeText(n int) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
