package workflow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/store/storetest"
)

func TestStartResumesAndGatesTasks(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "bug_fix_v1", "./src/parser.go", map[string]any{"ticket": "BUG-7"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Resumed || st.CurrentPhase != 1 || st.TotalPhases != 3 || st.TargetFile != "src/parser.go" {
		t.Fatalf("start = %+v", st)
	}
	if st.Phase == nil || !strings.Contains(st.Phase.Content, "Phase 1: Reproduce") || len(st.Phase.Tasks) != 2 || st.Phase.Gate.Strict {
		t.Fatalf("phase view = %+v", st.Phase)
	}
	again, err := e.Start(ctx, "bug_fix_v1", "src/parser.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Resumed || again.SessionID != st.SessionID {
		t.Fatalf("second start = %+v, want resume of %s", again, st.SessionID)
	}
	other, err := e.Start(ctx, "bug_fix_v1", "src/lexer.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if other.Resumed || other.SessionID == st.SessionID {
		t.Fatalf("other target resumed %s", other.SessionID)
	}

	task, err := e.Task(ctx, st.SessionID, 1, 2)
	if err != nil || !strings.Contains(task.Content, "Locate the cause") || task.Name != "Locate the cause" {
		t.Fatalf("task = %+v, %v", task, err)
	}
	_, err = e.Task(ctx, st.SessionID, 2, 1)
	wantKind(t, err, ErrPhaseLocked)
	_, err = e.Task(ctx, st.SessionID, 1, 9)
	wantKind(t, err, ErrTaskNotFound)
	_, err = e.Task(ctx, st.SessionID, 0, 1)
	wantKind(t, err, ErrPhaseNotFound)

	cur, err := e.CurrentPhase(ctx, st.SessionID)
	if err != nil || cur.Phase.PhaseNumber != 1 || cur.WorkflowComplete {
		t.Fatalf("current = %+v, %v", cur, err)
	}
	if cur.Phase.Checkpoint == nil || *cur.Phase.Checkpoint != CheckpointPending {
		t.Fatalf("checkpoint of the current phase = %v, want pending", cur.Phase.Checkpoint)
	}
}

func TestGating(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "bug_fix_v1", "src/parser.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := st.SessionID

	// Wrong phase: phase 3 while at 1.
	_, err = e.CompletePhase(ctx, id, 3, phase2OK, false)
	wantKind(t, err, ErrWrongPhase)

	// Phase 1 is not strict: a missing field and a failed check pass as warnings.
	res, err := e.CompletePhase(ctx, id, 1, map[string]any{"reproduced": true, "root_cause": "short", "severity": "huge", "notes": "x"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.CheckpointPassed || len(res.Errors) != 0 || res.NextPhase == nil || *res.NextPhase != 2 || res.WorkflowComplete {
		t.Fatalf("non-strict result = %+v", res)
	}
	warn := strings.Join(res.Warnings, "\n")
	for _, want := range []string{`missing required field "failing_test"`, `field "root_cause" has length 5`, `field "severity" must be one of`, `field "notes" is not in the evidence schema`, "cross-field validation failed: A reproduced bug needs the failing test's path"} {
		if !strings.Contains(warn, want) {
			t.Errorf("warnings lack %q:\n%s", want, warn)
		}
	}
	if len(res.FieldsMissing) != 1 || res.FieldsMissing[0] != "failing_test" {
		t.Errorf("fields_missing = %q", res.FieldsMissing)
	}
	if res.NextPhaseContent == nil || !strings.Contains(res.NextPhaseContent.Content, "Phase 2: Fix") || !res.NextPhaseContent.Gate.Strict {
		t.Fatalf("next phase content = %+v", res.NextPhaseContent)
	}

	// Completed phases stay readable; completing them again is refused.
	if _, err := e.Task(ctx, id, 1, 1); err != nil {
		t.Fatalf("task of a completed phase: %v", err)
	}
	_, err = e.CompletePhase(ctx, id, 1, phase1OK, false)
	wantKind(t, err, ErrPhaseCompleted)
	if !strings.Contains(err.Error(), "phase 1 already completed") {
		t.Errorf("message %q", err)
	}

	// Phase 2 is strict: missing, extra and wrong-typed fields block, and the attempt is stored.
	bad := map[string]any{"tests_passed": "42", "tests_failed": 2.0, "files_changed": []any{}, "extra": true}
	res, err = e.CompletePhase(ctx, id, 2, bad, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointPassed || res.CheckpointStatus != CheckpointFailed || res.NextPhase != nil || res.CurrentPhase != 2 {
		t.Fatalf("strict failure = %+v", res)
	}
	errs := strings.Join(res.Errors, "\n")
	for _, want := range []string{`field "tests_passed" must be an integer, got a string`, `field "tests_failed" is 2, above the maximum 0`, `field "files_changed" has length 0`, `missing required field "fix_summary"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), `field "extra" is not in the evidence schema`) {
		t.Errorf("warnings = %q", res.Warnings)
	}
	state, err := e.State(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if state.CurrentPhase != 2 || state.Checkpoints["2"] != CheckpointFailed || state.PhaseArtifacts["2"].Evidence["tests_failed"] != 2.0 || state.PhaseArtifacts["2"].Attempts != 1 {
		t.Fatalf("state after strict failure = %+v", state.Session)
	}

	// A future task stays locked after the failure.
	_, err = e.Task(ctx, id, 3, 1)
	wantKind(t, err, ErrPhaseLocked)

	// Fixing the evidence passes.
	res, err = e.CompletePhase(ctx, id, 2, phase2OK, false)
	if err != nil || !res.CheckpointPassed || res.NextPhase == nil || *res.NextPhase != 3 {
		t.Fatalf("strict pass = %+v, %v", res, err)
	}
	// Phase 3 has no gate file: anything passes and the workflow completes.
	res, err = e.CompletePhase(ctx, id, 3, nil, false)
	if err != nil || !res.CheckpointPassed || !res.WorkflowComplete || res.NextPhase != nil || res.NextPhaseContent != nil {
		t.Fatalf("final phase = %+v, %v", res, err)
	}
	_, err = e.CompletePhase(ctx, id, 3, nil, false)
	wantKind(t, err, ErrPhaseCompleted)
	_, err = e.CompletePhase(ctx, id, 4, nil, false)
	wantKind(t, err, ErrWorkflowComplete)

	state, _ = e.State(ctx, id)
	if state.Status != StatusCompleted || state.Progress != "3/3" || !state.WorkflowComplete || state.PhaseArtifacts["2"].Attempts != 2 {
		t.Fatalf("final state = %+v", state)
	}
	cur, err := e.CurrentPhase(ctx, id)
	if err != nil || !cur.WorkflowComplete || cur.Phase != nil {
		t.Fatalf("current phase of a complete session = %+v, %v", cur, err)
	}
	// A completed session is not resumed.
	again, err := e.Start(ctx, "bug_fix_v1", "src/parser.go", nil)
	if err != nil || again.Resumed || again.SessionID == id {
		t.Fatalf("start after completion = %+v, %v", again, err)
	}
}

func TestEvidenceTooLarge(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "bug_fix_v1", "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.CompletePhase(ctx, st.SessionID, 1, map[string]any{"log": strings.Repeat("x", MaxEvidenceBytes)}, false)
	wantKind(t, err, ErrEvidenceTooLarge)
	if !strings.Contains(err.Error(), "limit is 1 MiB") {
		t.Errorf("message %q", err)
	}
	state, _ := e.State(ctx, st.SessionID)
	if len(state.PhaseArtifacts) != 0 {
		t.Fatal("refused evidence was stored")
	}
}

func TestSessionsListAndDelete(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	a, _ := e.Start(ctx, "bug_fix_v1", "a", nil)
	b, _ := e.Start(ctx, "bug_fix_v1", "b", nil)
	for _, p := range []struct {
		n  int
		ev map[string]any
	}{{1, phase1OK}, {2, phase2OK}, {3, nil}} {
		if _, err := e.CompletePhase(ctx, b.SessionID, p.n, p.ev, false); err != nil {
			t.Fatal(err)
		}
	}
	for filter, want := range map[string]int{"": 2, "all": 2, "active": 1, "Completed": 1} {
		list, err := e.Sessions(ctx, filter)
		if err != nil || list.Count != want || len(list.Sessions) != want {
			t.Errorf("Sessions(%q) = %d, %v; want %d", filter, list.Count, err, want)
		}
	}
	_, err := e.Sessions(ctx, "paused")
	wantKind(t, err, ErrInvalidArgument)
	list, _ := e.Sessions(ctx, "completed")
	if s := list.Sessions[0]; s.SessionID != b.SessionID || s.Progress != "3/3" || s.Status != StatusCompleted {
		t.Fatalf("completed summary = %+v", s)
	}
	del, err := e.DeleteSession(ctx, a.SessionID)
	if err != nil || !del.Deleted || del.TargetFile != "a" {
		t.Fatalf("delete = %+v, %v", del, err)
	}
	_, err = e.State(ctx, a.SessionID)
	wantKind(t, err, ErrSessionNotFound)
	_, err = e.DeleteSession(ctx, a.SessionID)
	wantKind(t, err, ErrSessionNotFound)
	again, _ := e.Start(ctx, "bug_fix_v1", "a", nil)
	if again.Resumed {
		t.Fatal("a deleted session was resumed")
	}
	_, err = e.State(ctx, "../../etc/passwd")
	wantKind(t, err, ErrInvalidArgument)
}

func TestTargetFile(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"src/app.go", "src/app.go"},
		{"./src//app.go", "src/app.go"},
		{"feature-name", "feature-name"},
		{"src/new/dir/file.go", "src/new/dir/file.go"},
		{"", ""},
		{".", ""},
		{"/etc/passwd", ""},
		{"../x", ""},
		{"src/../../x", ""},
		{"src/..", ""},
		{`..\x`, ""},
		{`C:\x`, ""},
		{`\\server\share`, ""},
		{"a\x00b", ""},
		{"escape/file", ""},
		{"escape", ""},
		{strings.Repeat("a", maxTargetLen+1), ""},
	}
	for _, tc := range tests {
		got, err := cleanTarget(root, tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("cleanTarget(%q) = %q, want refusal", tc.in, got)
			} else {
				wantKind(t, err, ErrInvalidTarget)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("cleanTarget(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestBrokenAndUnknownWorkflows(t *testing.T) {
	root := newProject(t)
	wf := filepath.Join(root, ".praxis-os", "workflows")
	files := map[string]string{
		"dyn_v1/metadata.json":    `{"workflow_type":"dyn_v1","total_phases":"dynamic","phases":[{"phase_number":0,"phase_name":"Plan"}]}`,
		"broken_v1/metadata.json": `{"workflow_type":"broken_v1","total_phases":2,`,
	}
	for name, body := range files {
		p := filepath.Join(wf, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := openEngine(t, db, root, "p")
	ctx := context.Background()
	list, err := e.ListWorkflows(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]WorkflowInfo{}
	for _, w := range list.Workflows {
		got[w.WorkflowType] = w
	}
	if list.Count != 3 || got["bug_fix_v1"].Status != WorkflowReady || got["dyn_v1"].Status != WorkflowBroken || !strings.Contains(got["dyn_v1"].Error, "no dynamic_config") ||
		got["broken_v1"].Status != WorkflowBroken || !strings.Contains(got["broken_v1"].Error, "invalid JSON") {
		t.Fatalf("listing = %+v", list)
	}
	if list.Folder != ".praxis-os/workflows" {
		t.Errorf("folder = %q", list.Folder)
	}
	if l, _ := e.ListWorkflows(ctx, "CODE_QUALITY"); l.Count != 1 {
		t.Errorf("category filter gave %d", l.Count)
	}
	_, err = e.Start(ctx, "dyn_v1", "x", nil)
	wantKind(t, err, ErrWorkflowBroken)
	_, err = e.Start(ctx, "broken_v1", "x", nil)
	wantKind(t, err, ErrWorkflowBroken)
	_, err = e.Start(ctx, "nope", "x", nil)
	wantKind(t, err, ErrWorkflowNotFound)
}

func TestReloadAndRelevant(t *testing.T) {
	e, root := setup(t)
	ctx := context.Background()
	wf := filepath.Join(root, ".praxis-os", "workflows")
	if !e.Relevant(filepath.Join(wf, "bug_fix_v1", "phases", "1", "phase.md")) || !e.Relevant(wf) {
		t.Error("paths inside the workflows folder should be relevant")
	}
	for _, p := range []string{filepath.Join(root, ".praxis-os", "standards", "a.md"), filepath.Join(root, ".praxis-os", "workflows-old", "x"), root} {
		if e.Relevant(p) {
			t.Errorf("%s should not be relevant", p)
		}
	}
	st, _ := e.Start(ctx, "bug_fix_v1", "x", nil)
	// Break the definition: the session survives, starting refuses, reload restores.
	meta := filepath.Join(wf, "bug_fix_v1", "metadata.json")
	good, _ := os.ReadFile(meta)
	os.WriteFile(meta, []byte("{"), 0o644)
	e.Reload()
	_, err := e.CompletePhase(ctx, st.SessionID, 1, phase1OK, false)
	wantKind(t, err, ErrWorkflowBroken)
	if _, err := e.State(ctx, st.SessionID); err != nil {
		t.Fatalf("state of a session whose workflow broke: %v", err)
	}
	os.WriteFile(meta, good, 0o644)
	e.Reload()
	if _, err := e.CompletePhase(ctx, st.SessionID, 1, phase1OK, false); err != nil {
		t.Fatal(err)
	}
}

func TestClosedEngine(t *testing.T) {
	e, _ := setup(t)
	e.Close()
	if _, err := e.ListWorkflows(context.Background(), ""); err != ErrClosed {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e2, _ := setup(t)
	if _, err := e2.Sessions(ctx, ""); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestOpenOptions(t *testing.T) {
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	for _, o := range []Options{
		{Root: "relative", DB: db, ProjectID: "p"},
		{Root: t.TempDir(), ProjectID: "p"},
		{Root: t.TempDir(), DB: db},
		{Root: t.TempDir(), DB: db, ProjectID: "p", WorkflowsDir: "../elsewhere"},
	} {
		if _, err := Open(context.Background(), o); err == nil {
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
}

func TestGoTypedEvidence(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	st, _ := e.Start(ctx, "bug_fix_v1", "typed", nil)
	if _, err := e.CompletePhase(ctx, st.SessionID, 1, phase1OK, false); err != nil {
		t.Fatal(err)
	}
	res, err := e.CompletePhase(ctx, st.SessionID, 2, map[string]any{
		"tests_passed": 7, "tests_failed": int64(0), "files_changed": []string{"a.go"}, "fix_summary": "a Go caller's evidence",
	}, false)
	if err != nil || !res.CheckpointPassed {
		t.Fatalf("Go-typed evidence = %+v, %v", res, err)
	}
}
