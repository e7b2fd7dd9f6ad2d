package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	CheckpointStatus CheckpointStatus `json:"checkpoint_status" jsonschema:"passed, failed, or skipped"`
	Strict           bool             `json:"strict" jsonschema:"whether the phase's gate blocks on errors"`
	Errors           []string         `json:"errors" jsonschema:"why a strict gate failed"`
	Warnings         []string         `json:"warnings" jsonschema:"problems that did not block (all problems of a non-strict gate)"`
	FieldsMissing    []string         `json:"fields_missing"`
	CurrentPhase     int              `json:"current_phase"`
	NextPhase        *int             `json:"next_phase" jsonschema:"the phase now current; null when the phase did not advance or the workflow is complete"`
	NextPhaseContent *PhaseView       `json:"next_phase_content"`
	SkippedPhases    []int            `json:"skipped_phases" jsonschema:"later phases skipped on the way, because their skip_condition held"`
	WorkflowComplete bool             `json:"workflow_complete"`
}

// CompletePhase submits evidence for the session's current phase. The gate
// is checked first, outside any store transaction (its lambdas run in a
// child process, under limits); then one short transaction checks that
// the session is still where it was and records the outcome, so that of
// concurrent calls for one phase exactly one advances and the others get
// ErrPhaseCompleted. A strict gate that fails records "failed" with the
// evidence and does not advance; a non-strict gate passes and reports its
// problems as warnings. With skip, a skippable phase is recorded as
// skipped without checking its gate.
func (e *Engine) CompletePhase(ctx context.Context, sessionID string, phase int, evidence map[string]any, skip bool) (CompleteResult, error) {
	if err := e.ready(ctx); err != nil {
		return CompleteResult{}, err
	}
	if err := checkSessionID(sessionID); err != nil {
		return CompleteResult{}, err
	}
	evidence, err := normalizeEvidence(evidence)
	if err != nil {
		return CompleteResult{}, err
	}
	s, err := e.loadSession(ctx, sessionID)
	if err != nil {
		return CompleteResult{}, err
	}
	r, err := e.runFor(ctx, s)
	if err != nil {
		return CompleteResult{}, err
	}
	if err := checkCompletable(s, phase); err != nil {
		return CompleteResult{}, err
	}
	p, ok := r.phase(phase)
	if !ok {
		return CompleteResult{}, r.phaseNotFound(phase)
	}
	if skip && !p.Skippable {
		return CompleteResult{}, newError(ErrNotSkippable, "complete the phase with evidence its gate accepts (get_current_phase shows the gate)",
			"phase %d (%s) is not skippable: its metadata does not mark it \"skippable\": true", phase, p.Name)
	}
	var check definition.Result
	if !skip {
		// A call that waited for its turn to run the gate's lambdas looks
		// again first: another may have completed the phase meanwhile.
		recheck := func() error {
			s, err := e.loadSession(ctx, sessionID)
			if err != nil {
				return err
			}
			return checkCompletable(s, phase)
		}
		if check, err = e.checkGate(ctx, p, evidence, recheck); err != nil {
			return CompleteResult{}, err
		}
	}
	var res CompleteResult
	err = e.update(func(b *store.Bucket) error {
		s, err := getSession(b, sessionID)
		if err != nil {
			return err
		}
		if s == nil {
			return sessionNotFound(sessionID)
		}
		if err := checkCompletable(s, phase); err != nil {
			return err
		}
		if skip {
			res = e.skipPhase(s, r, p, evidence)
		} else {
			res = e.apply(s, r, p, evidence, check)
		}
		return putSession(b, s)
	})
	if err != nil {
		return CompleteResult{}, err
	}
	if res.CheckpointStatus == CheckpointFailed {
		e.log.Warn("phase gate failed: the phase does not advance", "session", sessionID, "workflow", r.w.Type, "phase", phase,
			"errors", strings.Join(res.Errors, "; "), "fields_missing", strings.Join(res.FieldsMissing, ", "))
	} else {
		e.log.Info("phase submitted", "session", sessionID, "workflow", r.w.Type, "phase", phase, "skip", skip,
			"passed", res.CheckpointPassed, "complete", res.WorkflowComplete)
	}
	if res.NextPhase != nil {
		if res.NextPhaseContent, err = e.phaseView(ctx, r, *res.NextPhase, nil); err != nil {
			// The advance is stored; the client can fetch the phase again.
			e.log.Warn("read next phase", "session", sessionID, "phase", *res.NextPhase, "err", err)
		}
	}
	return res, nil
}

// checkGate checks evidence against p's gate. A gate with lambdas runs
// them in a child process, one check of this project at a time (so that
// one project cannot hold every place the broker has for them); once its
// turn comes, recheck says whether the check is still wanted.
func (e *Engine) checkGate(ctx context.Context, p *definition.Phase, evidence map[string]any, recheck func() error) (definition.Result, error) {
	if len(p.Gate.Validators) == 0 && len(p.Gate.Rules) == 0 {
		return p.Gate.Check(ctx, evidence, nil)
	}
	select {
	case e.lambdaSlot <- struct{}{}:
		defer func() { <-e.lambdaSlot }()
	case <-ctx.Done():
		return definition.Result{}, ctx.Err()
	}
	if err := recheck(); err != nil {
		return definition.Result{}, err
	}
	return p.Gate.Check(ctx, evidence, loggedLambdas{run: e.lambdas, log: e.log, phase: p.Number})
}

// normalizeEvidence bounds evidence and decodes it again from JSON, so that
// Go callers' values (ints, []string) are checked and stored exactly as a
// JSON client's would be.
func normalizeEvidence(evidence map[string]any) (map[string]any, error) {
	if evidence == nil {
		evidence = map[string]any{}
	}
	raw, err := json.Marshal(evidence)
	if err != nil {
		return nil, newError(ErrInvalidArgument, "pass evidence as a JSON object", "evidence is not JSON: %v", err)
	}
	if len(raw) > MaxEvidenceBytes {
		return nil, newError(ErrEvidenceTooLarge,
			"summarize: pass counts, short texts and file paths instead of file contents or full logs",
			"evidence is %s; the limit is 1 MiB", sizeText(len(raw)))
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, newError(ErrInvalidArgument, "pass evidence as a JSON object", "evidence is not a JSON object: %v", err)
	}
	return out, nil
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

// apply records in s the outcome of checking the evidence against the
// phase's gate.
func (e *Engine) apply(s *Session, r run, p *definition.Phase, evidence map[string]any, check definition.Result) CompleteResult {
	res := CompleteResult{
		SessionID: s.SessionID, Phase: p.Number, Strict: p.Gate.Strict,
		Errors: check.Errors, Warnings: check.Warnings, FieldsMissing: check.FieldsMissing,
	}
	if !p.Gate.Strict && len(check.Errors) > 0 {
		res.Warnings = append(append([]string{}, check.Errors...), check.Warnings...)
		res.Errors = []string{}
	}
	res.CheckpointPassed = len(res.Errors) == 0
	e.record(s, r, p, evidence)
	key := phaseKey(p.Number)
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
	e.advance(s, r, &res)
	return res
}

// skipPhase records p as skipped on request.
func (e *Engine) skipPhase(s *Session, r run, p *definition.Phase, evidence map[string]any) CompleteResult {
	e.record(s, r, p, evidence)
	s.skip(p.Number)
	res := CompleteResult{
		SessionID: s.SessionID, Phase: p.Number, Strict: p.Gate.Strict, CheckpointPassed: true,
		CheckpointStatus: CheckpointSkipped, Errors: []string{}, Warnings: []string{}, FieldsMissing: []string{},
	}
	e.advance(s, r, &res)
	return res
}

// record keeps the evidence of an attempt at p.
func (e *Engine) record(s *Session, r run, p *definition.Phase, evidence map[string]any) {
	now := e.now()
	key := phaseKey(p.Number)
	prev := s.PhaseArtifacts[key]
	s.PhaseArtifacts[key] = Artifact{Evidence: evidence, Timestamp: now, Attempts: prev.Attempts + 1}
	s.UpdatedAt = now
	s.FirstPhase, s.TotalPhases = r.first(), r.total()
}

// advance enters the next phase (skipping what its options skip) and fills
// the result's position.
func (e *Engine) advance(s *Session, r run, res *CompleteResult) {
	before := len(s.SkippedPhases)
	e.enter(s, r)
	res.SkippedPhases = append([]int{}, s.SkippedPhases[before:]...)
	res.CurrentPhase = s.CurrentPhase
	res.WorkflowComplete = s.complete()
	if !res.WorkflowComplete {
		next := s.CurrentPhase
		res.NextPhase = &next
	}
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
