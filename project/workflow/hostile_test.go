package workflow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
)

// gatedProject is a project whose workflow gated_v1 has two phases, the
// first gated by gateYAML, on a database of its own; it returns the engine.
func gatedProject(t *testing.T, db *store.DB, id, gateYAML string) *Engine {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"metadata.json":                 `{"workflow_type": "gated_v1", "total_phases": 2, "phases": [{"phase_number": 1, "phase_name": "Gated"}, {"phase_number": 2, "phase_name": "After"}]}`,
		"phases/1/phase.md":             "# Phase 1\n",
		"phases/1/gate-definition.yaml": gateYAML,
		"phases/2/phase.md":             "# Phase 2\n",
	}
	for name, body := range files {
		p := filepath.Join(root, ".praxis-os", "workflows", "gated_v1", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openEngine(t, db, root, id)
}

const slowGate = `checkpoint: {strict: true}
evidence_schema:
  done: {type: boolean, required: true}
cross_field_validation:
  - rule: "lambda e: sum(range(1000000000)) > 0"
    error_message: "a rule that never ends"
`

// TestHostileLambdaIsAFailedCheck: a lambda stopped by its CPU limit fails
// the gate with the reason, and the phase does not advance.
func TestHostileLambdaIsAFailedCheck(t *testing.T) {
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := gatedProject(t, db, "p", slowGate)
	ctx := context.Background()
	st, err := e.Start(ctx, "gated_v1", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.CompletePhase(ctx, st.SessionID, 1, map[string]any{"done": true}, false)
	if err != nil {
		t.Fatal(err)
	}
	// The CPU limit stops it, or on a busy machine the deadline first.
	if res.CheckpointPassed || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "a rule that never ends") ||
		!strings.Contains(res.Errors[0], "of CPU time") && !strings.Contains(res.Errors[0], "stopped: it ran longer than") {
		t.Fatalf("complete with a rule stopped by a limit: %+v", res)
	}
	state, _ := e.State(ctx, st.SessionID)
	if state.CurrentPhase != 1 || state.Checkpoints["1"] != CheckpointFailed {
		t.Fatalf("state after the failed check: %+v", state)
	}
}

// TestSlowGateDoesNotHoldTheStore: while one project's gate check runs (a
// lambda that takes a second of CPU), another project on the same database
// starts a workflow and completes a phase: the check holds no
// transaction.
func TestSlowGateDoesNotHoldTheStore(t *testing.T) {
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	slow := gatedProject(t, db, "slow", slowGate)
	quick := gatedProject(t, db, "quick", "evidence_schema:\n  done: {type: boolean, required: true}\n")
	ctx := context.Background()
	st, err := slow.Start(ctx, "gated_v1", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := slow.CompletePhase(ctx, st.SessionID, 1, map[string]any{"done": true}, false)
		done <- err
	}()
	brokertest.Eventually(t, "the slow check starts", func() bool { return len(slow.lambdaSlot) > 0 })
	other, err := quick.Start(ctx, "gated_v1", "y", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := quick.CompletePhase(ctx, other.SessionID, 1, map[string]any{"done": true}, false)
	if err != nil || !res.CheckpointPassed {
		t.Fatalf("the other project's phase: %+v, %v", res, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the slow check ended (%v) before the other project was done: the test proves nothing", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestClientLeavingStopsTheGate: when the request's context ends, the
// gate's child is killed and CompletePhase returns the context's error,
// recording nothing.
func TestClientLeavingStopsTheGate(t *testing.T) {
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := gatedProject(t, db, "p", slowGate)
	st, err := e.Start(context.Background(), "gated_v1", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := e.CompletePhase(ctx, st.SessionID, 1, map[string]any{"done": true}, false); err != context.Canceled {
		t.Fatalf("CompletePhase after the client left = %v, want context.Canceled", err)
	}
	state, _ := e.State(context.Background(), st.SessionID)
	if state.Checkpoints["1"] != CheckpointPending || len(state.PhaseArtifacts) != 0 {
		t.Fatalf("a check the client left recorded something: %+v", state)
	}
}

// TestStoreFailureIsNotNoSession: when the store cannot say whether an
// active session exists (its record is damaged), start_workflow reports
// that, rather than taking it for "none" and planning a new session.
func TestStoreFailureIsNotNoSession(t *testing.T) {
	e, root := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "feature_delivery_v1", "feature", map[string]any{"spec_path": ".praxis-os/specs/2025-10-07-small-feature"})
	if err != nil {
		t.Fatal(err)
	}
	err = e.area.Update(func(b *store.Bucket) error {
		return b.Bucket(bucketSessions).Put([]byte(st.SessionID), []byte("{damaged"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, ".praxis-os", "specs")); err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(ctx, "feature_delivery_v1", "feature", map[string]any{"spec_path": ".praxis-os/specs/2025-10-07-small-feature"})
	if err == nil || !strings.Contains(err.Error(), "look up the active session") || !strings.Contains(err.Error(), "decode session") {
		t.Fatalf("start over a damaged store = %v; want the store's failure", err)
	}
}

// TestHostileGatesAreBounded: the gates that cost the broker seconds and
// gigabytes before are each a failed check (or a broken workflow) with a
// clear message, and complete_phase costs the broker within a request's
// budget; what a lambda costs, it costs in its child, under its limits.
func TestHostileGatesAreBounded(t *testing.T) {
	costly := strings.Repeat(".{1000}", 10) + "z"
	cases := []struct {
		name, gate string
		evidence   map[string]any
		want       string
	}{
		{"a validator's one huge list (30.6 s, +7.6 GB before)",
			"evidence_schema:\n  n: {type: integer, required: true, validator: huge}\nvalidators:\n  huge: \"lambda x: len([0] * 500000000) > 0\"\ncheckpoint: {strict: true}\n",
			map[string]any{"n": 1}, `validator "huge" failed for field "n": stopped: it used more than 256 MiB of memory`},
		{"a rule's text of a long list (12 s, 9 GB before)",
			"checkpoint: {strict: true}\ncross_field_validation:\n  - rule: \"lambda e: len(str(list(range(100000000)))) > 0\"\n    error_message: big\n",
			map[string]any{}, "stopped: it used more than 256 MiB of memory"},
		{"a rule's costly regular expression (6 s a call before)",
			"checkpoint: {strict: true}\ncross_field_validation:\n  - rule: \"lambda e: re.search('(.{1000})z', 'a' * 1000000) != None\"\n    error_message: re\n",
			map[string]any{}, "repeats 1000 times; a counted repetition may be at most {100}"},
		{"500 KB of evidence against a costly pattern",
			"checkpoint: {strict: true}\nevidence_schema:\n  s: {type: string, required: true, pattern: \"" + strings.Repeat(".{100}", 5) + "z\"}\n",
			map[string]any{"s": strings.Repeat("a", 500_000)}, "so at most 7952 bytes are matched: shorten the text or simplify the pattern"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if workflowtest.RaceSlack > 1 && strings.Contains(c.want, "MiB of memory") {
				t.Skip("the race detector's build holds no address-space limit: its child's memory is held by the watchdog alone, too slowly to test here (lambdaproc's own tests run it)")
			}
			db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
			e := gatedProject(t, db, "p", c.gate)
			ctx := context.Background()
			st, err := e.Start(ctx, "gated_v1", "x", nil)
			if err != nil {
				t.Fatal(err)
			}
			var res CompleteResult
			cost := workflowtest.Measure(func() { res, err = e.CompletePhase(ctx, st.SessionID, 1, c.evidence, false) })
			if err != nil {
				t.Fatal(err)
			}
			if res.CheckpointPassed || !strings.Contains(strings.Join(res.Errors, "\n"), c.want) {
				t.Fatalf("errors %q, want %q", res.Errors, c.want)
			}
			workflowtest.Request.Check(t, c.name, cost)
		})
	}

	// A pattern whose counted repetitions make 30 s of CPU per call (10
	// times .{1000}) makes the workflow broken, with the fix, at load.
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := gatedProject(t, db, "p", "evidence_schema:\n  s: {type: string, pattern: \""+costly+"\"}\n")
	_, err := e.Start(context.Background(), "gated_v1", "x", nil)
	wantKind(t, err, ErrWorkflowBroken)
	if !strings.Contains(err.Error(), "a counted repetition may be at most {100}: use + or * instead") {
		t.Fatalf("start with a costly pattern: %v", err)
	}
}

// TestOversizedRenderRefusesTheStart: a spec whose phase would render past
// the cap from the workflow's template (a 400 KB template repeating
// [PHASE_DESCRIPTION] 20,000 times and a 5,000-character objective: 22.5 s
// and 200 MB before) is refused at start, within a request's budget, and
// no session is left on a phase it cannot show.
func TestOversizedRenderRefusesTheStart(t *testing.T) {
	e, root := compatProject(t)
	tmpl := strings.Repeat("[PHASE_DESCRIPTION]", 20_000) + strings.Repeat("x", 20_000)
	if err := os.WriteFile(filepath.Join(root, ".praxis-os", "workflows", "feature_delivery_v1", "phases", "dynamic", "phase-template.md"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Reload()
	spec := filepath.Join(root, "big-spec", "tasks.md")
	if err := os.MkdirAll(filepath.Dir(spec), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte("## Phase 1: Big\n\n**Objective:** "+strings.Repeat("o", 5000)+"\n\n- [ ] **Task 1.1**: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var err error
	cost := workflowtest.Measure(func() {
		_, err = e.Start(ctx, "feature_delivery_v1", "big", map[string]any{"spec_path": "big-spec"})
	})
	wantKind(t, err, ErrContentTooLarge)
	if !strings.Contains(err.Error(), "phase 1 (Big): the rendered phase would be 100020000 bytes") {
		t.Fatalf("start = %v", err)
	}
	workflowtest.Request.Check(t, "refusing the start", cost)
	if l, _ := e.Sessions(ctx, FilterAll); l.Count != 0 {
		t.Fatalf("the refused start left %d sessions", l.Count)
	}
}
