package workflow

import (
	"context"
	"strings"
	"testing"
)

// complete submits evidence for a phase of session sid and fails the test
// on an engine error (a refused gate is a result, not an error).
func complete(t *testing.T, e *Engine, sid string, phase int, evidence map[string]any) CompleteResult {
	t.Helper()
	res, err := e.CompletePhase(context.Background(), sid, phase, evidence, false)
	if err != nil {
		t.Fatalf("complete phase %d: %v", phase, err)
	}
	return res
}

// hasText reports whether one of list contains want.
func hasText(list []string, want string) bool {
	for _, s := range list {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

// TestGateLambdasOfTheFormat walks db_migration_v1, whose gates hold every
// kind of check a praxis-os gate file can: declared checks, validators
// with validator_params, cross_field_validation rules (with re and
// yaml.safe_load), on strict and lenient gates.
func TestGateLambdasOfTheFormat(t *testing.T) {
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "db_migration_v1", "db/2026-add-index", nil)
	if err != nil {
		t.Fatal(err)
	}
	sid := st.SessionID
	phase0 := map[string]any{"tables_listed": 2, "plan_summary": "add an index on orders.created_at", "needs_downtime": true, "downtime_minutes": 5}
	for _, tc := range []struct {
		change map[string]any
		want   string
	}{
		{map[string]any{"downtime_minutes": 0}, "A migration that needs downtime must say how many minutes"}, // cross-field rule
		{map[string]any{"downtime_minutes": 45}, `validator "in_range" failed for field "downtime_minutes"`}, // validator_params
		{map[string]any{"tables_listed": 0}, "below the minimum 1"},                                          // min
		{map[string]any{"plan_summary": "Add an index"}, "does not match the pattern ^[a-z]"},                // pattern
		{map[string]any{"plan_summary": "short"}, "below the minimum length 10"},                             // min_length
	} {
		ev := map[string]any{}
		for k, v := range phase0 {
			ev[k] = v
		}
		for k, v := range tc.change {
			ev[k] = v
		}
		res := complete(t, e, sid, 0, ev)
		if res.CheckpointPassed || res.CheckpointStatus != CheckpointFailed || !hasText(res.Errors, tc.want) {
			t.Errorf("phase 0 with %v: passed %v, errors %q, want %q", tc.change, res.CheckpointPassed, res.Errors, tc.want)
		}
	}
	if res := complete(t, e, sid, 0, phase0); !res.CheckpointPassed || len(res.Errors) != 0 || len(res.Warnings) != 0 {
		t.Fatalf("phase 0 with valid evidence: %+v", res)
	}

	// Phase 1 is lenient: a broken rule is a warning and the phase passes.
	res := complete(t, e, sid, 1, map[string]any{"backup_taken": false, "backup_size_mb": 12.5, "restore_tested": true})
	if !res.CheckpointPassed || len(res.Errors) != 0 || !hasText(res.Warnings, "A restore can only be tested from a backup that was taken") {
		t.Fatalf("phase 1 lenient rule: %+v", res)
	}

	// Phase 2: a rule comparing two fields, a validator with a parameter on
	// an optional field, an enum.
	res = complete(t, e, sid, 2, map[string]any{"migration_applied": true, "rows_before": 120, "rows_after": 119,
		"log_excerpt": "applied 1 migration", "engine": "oracle"})
	for _, want := range []string{"Rows went missing", `validator "contains_text" failed for field "log_excerpt"`, `must be one of ["postgres","mysql","sqlite"]`} {
		if res.CheckpointPassed || !hasText(res.Errors, want) {
			t.Errorf("phase 2: errors %q lack %q", res.Errors, want)
		}
	}
	res = complete(t, e, sid, 2, map[string]any{"migration_applied": true, "rows_before": 120, "rows_after": 120, "log_excerpt": "done in 2s", "engine": "postgres"})
	if !res.CheckpointPassed {
		t.Fatalf("phase 2 with valid evidence: %+v", res)
	}

	// Phase 3: a validator that calls yaml.safe_load and re.search.
	res = complete(t, e, sid, 3, map[string]any{"queries_run": 2, "report": "", "checked_by": []any{"ana", "bo", "cy"}})
	if !res.CheckpointPassed || !hasText(res.Warnings, `validator "yaml_parseable" failed for field "report"`) || !hasText(res.Warnings, "More reviewers than queries") {
		t.Fatalf("phase 3 lenient: %+v", res)
	}
	if !res.WorkflowComplete {
		t.Fatalf("the last phase passed but the workflow is not complete: %+v", res)
	}
}

// TestMetadataGateAndTasksByName: design_doc_v1's phase 3 has no gate file
// and its metadata names the evidence (a map of name to type): a strict
// gate. runbook_writing_v1 has no gate file at all (permissive gates) and
// a phase whose tasks are its task-K-*.md files.
func TestMetadataGateAndTasksByName(t *testing.T) {
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "design_doc_v1", "designs/checkout", nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		complete(t, e, st.SessionID, n, map[string]any{})
	}
	res := complete(t, e, st.SessionID, 3, map[string]any{"approved": "yes"})
	if res.CheckpointPassed || !hasText(res.Errors, `missing required field "reviewed_by"`) || !hasText(res.Errors, `field "approved" must be a boolean`) {
		t.Fatalf("metadata gate with bad evidence: %+v", res)
	}
	if res = complete(t, e, st.SessionID, 3, map[string]any{"approved": true, "reviewed_by": "ana"}); !res.WorkflowComplete {
		t.Fatalf("metadata gate with good evidence: %+v", res)
	}

	st, err = e.Start(ctx, "runbook_writing_v1", "runbooks/db", nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 2; n++ {
		if res := complete(t, e, st.SessionID, n, nil); !res.CheckpointPassed || res.Strict {
			t.Fatalf("permissive phase %d: %+v", n, res)
		}
	}
	task, err := e.Task(ctx, st.SessionID, 2, 2)
	if err != nil || task.Name != "fix steps" || task.Source != SourceFile || !strings.Contains(task.Content, "# Task 2: Fix the steps") {
		t.Fatalf("task 2/2 found by file name = %+v, %v", task, err)
	}
}

// TestAnswersAsPraxisOSDocumentsThem checks Berth against what praxis-os's
// own documentation says its workflow engine does (docs/content/reference/
// workflows.md and mcp_server/validation/validator_executor.py of
// honeyhiveai/praxis-os), on the praxis-format workflows.
func TestAnswersAsPraxisOSDocumentsThem(t *testing.T) {
	t.Parallel() // its own project and store (and broker): beside the other tests marked so
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "db_migration_v1", "db/docs", nil)
	if err != nil {
		t.Fatal(err)
	}
	// "start_workflow returns session_id, current_phase, workflow_type and
	// the phase content."
	if st.SessionID == "" || st.CurrentPhase != 0 || st.WorkflowType != "db_migration_v1" || st.Phase == nil || st.Phase.Content == "" {
		t.Fatalf("start = %+v", st)
	}
	// "Phase gating: only the current phase or a completed one is accessible."
	if _, err := e.Task(ctx, st.SessionID, 1, 1); err == nil {
		t.Fatal("a task of phase 1 is readable while the session is at phase 0")
	}
	_, err = e.CompletePhase(ctx, st.SessionID, 1, nil, false)
	wantKind(t, err, ErrWrongPhase)
	// "Invalid evidence (missing field): checkpoint_passed false, with the
	// missing fields; the session stays on the phase."
	res := complete(t, e, st.SessionID, 0, map[string]any{"tables_listed": 1, "plan_summary": "drop the legacy table", "needs_downtime": false})
	if res.CheckpointPassed || len(res.FieldsMissing) != 1 || res.FieldsMissing[0] != "downtime_minutes" || res.CurrentPhase != 0 || res.NextPhase != nil {
		t.Fatalf("missing evidence: %+v", res)
	}
	// "Validator exception = validation failure with error message": the
	// rule compares text with a number.
	res = complete(t, e, st.SessionID, 0, map[string]any{"tables_listed": 1, "plan_summary": "drop the legacy table", "needs_downtime": true, "downtime_minutes": "five"})
	if res.CheckpointPassed || !hasText(res.Errors, `field "downtime_minutes" must be an integer`) ||
		!hasText(res.Errors, "cross-field rule 0 (A migration that needs downtime must say how many minutes) could not be evaluated") {
		t.Fatalf("a rule that raises: %+v", res)
	}
	// "Valid evidence: checkpoint_passed true and next_phase with its content."
	res = complete(t, e, st.SessionID, 0, map[string]any{"tables_listed": 1, "plan_summary": "drop the legacy table", "needs_downtime": false, "downtime_minutes": 0})
	if !res.CheckpointPassed || res.NextPhase == nil || *res.NextPhase != 1 || res.NextPhaseContent == nil || res.NextPhaseContent.PhaseName != "Back up" {
		t.Fatalf("valid evidence: %+v", res)
	}
	// "strict: false gates let the workflow advance" (allow_override).
	res = complete(t, e, st.SessionID, 1, map[string]any{})
	if !res.CheckpointPassed || len(res.Warnings) != 3 || res.Strict {
		t.Fatalf("a lenient gate with no evidence: %+v", res)
	}
	// "get_workflow_state returns current_phase and completed_phases."
	state, err := e.State(ctx, st.SessionID)
	if err != nil || state.CurrentPhase != 2 || len(state.CompletedPhases) != 2 || state.CompletedPhases[1] != 1 {
		t.Fatalf("state = %+v, %v", state, err)
	}
}
