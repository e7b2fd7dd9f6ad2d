package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/store"
	"github.com/google/uuid"
)

const maxOptionsBytes = 64 << 10

// StartResult is the result of start_workflow.
type StartResult struct {
	SessionID     string     `json:"session_id"`
	WorkflowType  string     `json:"workflow_type"`
	TargetFile    string     `json:"target_file"`
	Resumed       bool       `json:"resumed" jsonschema:"true when an active session for this workflow and target was resumed"`
	CurrentPhase  int        `json:"current_phase"`
	FirstPhase    int        `json:"first_phase"`
	TotalPhases   int        `json:"total_phases"`
	SkippedPhases []int      `json:"skipped_phases" jsonschema:"phases skipped because their skip_condition held for these options"`
	Overview      *Overview  `json:"workflow_overview" jsonschema:"every phase of this session by number and name, generated phases included"`
	Phase         *PhaseView `json:"phase" jsonschema:"the current phase; null when every phase was skipped"`
}

// Start starts workflowType on targetFile, or resumes the active session for
// the same pair. The lookup and the creation share one store transaction, so
// two clients starting at once get the same session. A dynamic workflow's
// source is parsed here and its phases stored with the new session;
// skippable phases whose skip_condition holds for options are skipped.
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
	s, resumed, err := e.startOrResume(ctx, w, target, options)
	if err != nil {
		return StartResult{}, err
	}
	r, err := e.runFor(ctx, s)
	if err != nil {
		return StartResult{}, err
	}
	if resumed {
		e.log.Info("workflow resumed", "session", s.SessionID, "workflow", workflowType, "target", target, "phase", s.CurrentPhase)
	} else {
		e.log.Info("workflow started", "session", s.SessionID, "workflow", workflowType, "target", target,
			"phases", s.TotalPhases, "skipped", s.SkippedPhases)
	}
	res := StartResult{
		SessionID: s.SessionID, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile, Resumed: resumed,
		CurrentPhase: s.CurrentPhase, FirstPhase: s.FirstPhase, TotalPhases: r.total(),
		SkippedPhases: nonNil(s.SkippedPhases), Overview: overview(r),
	}
	if !s.complete() {
		if res.Phase, err = e.phaseView(ctx, r, s.CurrentPhase, s); err != nil {
			return StartResult{}, err
		}
	}
	return res, nil
}

// errPlanNeeded ends a start transaction that found no active session
// where a moment before there was one: the plan is then made, outside any
// transaction, and the start tried again.
var errPlanNeeded = errors.New("the active session ended: plan the new one")

// startOrResume returns the active session for w and target, or a new one
// it stores. A dynamic workflow's plan (its source read and parsed) is
// made before the transaction, which is kept short: what a repository
// holds is never parsed inside it.
func (e *Engine) startOrResume(ctx context.Context, w *definition.Workflow, target string, options map[string]any) (*Session, bool, error) {
	co := e.checkout() // files of the repository: read before the transaction
	for attempt := 0; attempt < 2; attempt++ {
		var plan *Plan
		if w.Dynamic != nil {
			active := false
			if attempt == 0 {
				var err error
				if active, err = e.hasActive(w.Type, target); err != nil {
					return nil, false, err
				}
			}
			if !active {
				var err error
				if plan, err = e.buildPlan(ctx, w, options); err != nil {
					return nil, false, err
				}
			}
		}
		var s *Session
		resumed := false
		err := e.update(func(b *store.Bucket) error {
			cur, err := activeSession(b, w.Type, target)
			if err != nil || cur != nil {
				s, resumed = cur, cur != nil
				return err
			}
			if w.Dynamic != nil && plan == nil {
				return errPlanNeeded
			}
			r := run{w: w, plan: plan}
			now := e.now()
			s = &Session{
				SessionID: uuid.NewString(), WorkflowType: w.Type, TargetFile: target,
				CurrentPhase: r.first(), FirstPhase: r.first(), TotalPhases: r.total(),
				CreatedAt: now, UpdatedAt: now, Status: StatusActive, Options: options, Plan: plan,
				Worktree: co.Root, Branch: co.Branch, Commit: co.Commit,
			}
			s.Checkpoints = map[string]CheckpointStatus{}
			e.enter(s, r)
			return putSession(b, s)
		})
		if errors.Is(err, errPlanNeeded) {
			continue
		}
		return s, resumed, err
	}
	return nil, false, errors.New("start: the workflow's active session kept changing; try again")
}

// enter makes s's current phase pending, first skipping the skippable
// phases whose skip_condition holds for the session's options.
func (e *Engine) enter(s *Session, r run) {
	for !s.complete() {
		p, ok := r.phase(s.CurrentPhase)
		if !ok || !p.Skippable || p.SkipOption == "" || !definition.SkipMet(p.SkipOption, s.Options) {
			break
		}
		s.skip(p.Number)
	}
	if !s.complete() {
		s.Checkpoints[phaseKey(s.CurrentPhase)] = CheckpointPending
	}
}

// hasActive reports whether an active session exists for the pair. A
// store that cannot say is an error, not a "no".
func (e *Engine) hasActive(workflowType, target string) (bool, error) {
	found := false
	err := e.area.View(func(b *store.Bucket) error {
		cur, err := activeSession(b, workflowType, target)
		found = cur != nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up the active session of %s for %q: %w", workflowType, target, err)
	}
	return found, nil
}
