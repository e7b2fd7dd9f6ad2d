package workflow

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// compatProject is a project holding the praxis-format workflows, the
// small spec and a standard, with a workflow engine whose missing files are
// answered by a real search index over the project.
func compatProject(t *testing.T) (*Engine, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	workflowtest.Project(t, root)
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	ix, err := search.Open(context.Background(), search.Options{Root: root, DB: db, ProjectID: "compat",
		Sources: []string{".praxis-os/standards", ".praxis-os/usage", ".praxis-os/workflows"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	e, err := Open(context.Background(), Options{Root: root, DB: db, ProjectID: "compat", Logger: testLogger(t), Search: ix, Lambdas: testLambdas})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, root
}

// TestPraxisFormatWorkflowsRunOverMCP starts each of the five workflows
// in praxis-os's format through a go-sdk client and walks its first two
// phases with valid and with invalid evidence, through the workflow tools
// and through pos_workflow.
func TestPraxisFormatWorkflowsRunOverMCP(t *testing.T) {
	t.Parallel() // its own project and store (and broker): beside the other tests marked so
	e, _ := compatProject(t)
	cs, _ := connect(t, e, true, true)
	tools := &workflowtest.Client{TB: t, CS: cs}
	workflowtest.ListsReady(tools)
	for _, wf := range workflowtest.Workflows {
		t.Run(wf, func(t *testing.T) {
			for _, pos := range []bool{false, true} {
				c := &workflowtest.Client{TB: t, CS: cs, POS: pos}
				for _, valid := range []bool{true, false} {
					target := "targets/" + wf + map[bool]string{true: "-valid", false: "-invalid"}[valid] + map[bool]string{true: "-pos", false: ""}[pos]
					workflowtest.WalkFirstPhases(c, wf, target, workflowtest.Options[wf], valid)
				}
			}
		})
	}
}

// TestPOSWorkflowGivesTheSameAnswers walks feature_delivery_v1 to the end
// twice, through the workflow tools and through pos_workflow, and compares
// every answer but the ids and times.
func TestPOSWorkflowGivesTheSameAnswers(t *testing.T) {
	t.Parallel() // its own project and store (and broker): beside the other tests marked so
	e, _ := compatProject(t)
	cs, _ := connect(t, e, true, true)
	viaTools := workflowtest.WalkSpecExecution(&workflowtest.Client{TB: t, CS: cs}, "feature")
	viaPOS := workflowtest.WalkSpecExecution(&workflowtest.Client{TB: t, CS: cs, POS: true}, "feature-pos")
	if d := cmp.Diff(scrub(t, viaTools), scrub(t, viaPOS)); d != "" {
		t.Fatalf("workflow tools and pos_workflow differ (-tools +pos):\n%s", d)
	}
	for _, wf := range []string{"db_migration_v1", "workflow_scaffold_v1"} {
		a := workflowtest.WalkFirstPhases(&workflowtest.Client{TB: t, CS: cs}, wf, "same-"+wf, nil, false)
		b := workflowtest.WalkFirstPhases(&workflowtest.Client{TB: t, CS: cs, POS: true}, wf, "same-pos-"+wf, nil, false)
		if d := cmp.Diff(scrub(t, a), scrub(t, b)); d != "" {
			t.Fatalf("%s: workflow tools and pos_workflow differ (-tools +pos):\n%s", wf, d)
		}
	}
}

// scrub drops what differs between two sessions of the same walk.
func scrub(t *testing.T, tr workflowtest.Transcript) any {
	raw, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k := range x {
				switch k {
				case "session_id", "target_file", "created_at", "updated_at", "timestamp", "parsed_at":
					delete(x, k)
				default:
					x[k] = walk(x[k])
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	return walk(v)
}

// TestSkippablePhaseZeroWithoutItsOption: design_doc_v1's phase 0 is
// skippable "No reference_docs in options", so a start without them
// begins at phase 1, and with them phase 0 (whose tasks start at task 0)
// can still be skipped on request.
func TestSkippablePhaseZeroWithoutItsOption(t *testing.T) {
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "design_doc_v1", "designs/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.CurrentPhase != 1 || len(st.SkippedPhases) != 1 || st.SkippedPhases[0] != 0 || st.Phase.PhaseNumber != 1 || st.TotalPhases != 4 {
		t.Fatalf("start without reference_docs = phase %d, skipped %v", st.CurrentPhase, st.SkippedPhases)
	}
	state, _ := e.State(ctx, st.SessionID)
	if state.Checkpoints["0"] != CheckpointSkipped || state.Phases[0].Status != "skipped" || state.Progress != "1/4" {
		t.Fatalf("state = %+v", state)
	}
	st, err = e.Start(ctx, "design_doc_v1", "designs/b", map[string]any{"reference_docs": []any{"docs/a.md"}})
	if err != nil || st.CurrentPhase != 0 || !st.Phase.Skippable || st.Phase.Tasks[0].TaskNumber != 0 {
		t.Fatalf("start with reference_docs = %+v, %v", st, err)
	}
	task, err := e.Task(ctx, st.SessionID, 0, 0)
	if err != nil || task.Source != SourceFile || !strings.Contains(task.Content, "# Task 0: Create the design folder") {
		t.Fatalf("task 0/0 = %+v, %v", task, err)
	}
	res, err := e.CompletePhase(ctx, st.SessionID, 0, map[string]any{"reason": "the docs were already summarised"}, true)
	if err != nil || res.CheckpointStatus != CheckpointSkipped || res.CurrentPhase != 1 {
		t.Fatalf("skip phase 0 = %+v, %v", res, err)
	}
	_, err = e.CompletePhase(ctx, st.SessionID, 1, nil, true)
	wantKind(t, err, ErrNotSkippable)
}

// TestMissingFilesAnsweredFromSearch: workflow_scaffold_v1 names task files
// that phases/3 does not hold and has no phases/4 at all; the workflow runs
// and those are answered from the standards search, with a warning.
func TestMissingFilesAnsweredFromSearch(t *testing.T) {
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "workflow_scaffold_v1", "wf/new", nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 3; n++ {
		if _, err := e.CompletePhase(ctx, st.SessionID, n, map[string]any{}, false); err != nil {
			t.Fatal(err)
		}
	}
	task, err := e.Task(ctx, st.SessionID, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if task.Source != SourceSearch || !strings.Contains(task.Content, "From ") || len(task.Warnings) != 1 ||
		!strings.Contains(task.Warnings[0], "phases/3/task-1-load-target-definition.md is missing") {
		t.Fatalf("task 3/1 = source %q warnings %q content %q", task.Source, task.Warnings, task.Content)
	}
	if !strings.Contains(task.Content, "generating-phase-content.md") {
		t.Errorf("the search answer does not include the standard about loading the target definition:\n%s", task.Content)
	}
	if _, err := e.CompletePhase(ctx, st.SessionID, 3, map[string]any{}, false); err != nil {
		t.Fatal(err)
	}
	cur, err := e.CurrentPhase(ctx, st.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if p := cur.Phase; p.PhaseNumber != 4 || p.Source != SourceSearch || p.Content == "" || len(p.Warnings) != 1 || p.Gate.Source != "permissive" || len(p.Tasks) != 2 || !p.Tasks[0].FromSearch {
		t.Fatalf("phase 4 = %+v", p)
	}
	res, err := e.CompletePhase(ctx, st.SessionID, 4, map[string]any{"human_approved": true}, false)
	if err != nil || !res.WorkflowComplete {
		t.Fatalf("last phase: %+v, %v", res, err)
	}
}

// TestMissingFilesWithoutSearch: without a search the engine still serves
// the phase, built from metadata, and says so.
func TestMissingFilesWithoutSearch(t *testing.T) {
	root := t.TempDir()
	workflowtest.Project(t, root)
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := openEngine(t, db, root, "nosearch")
	ctx := context.Background()
	st, err := e.Start(ctx, "workflow_scaffold_v1", "wf", nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 3; n++ {
		if _, err := e.CompletePhase(ctx, st.SessionID, n, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	task, err := e.Task(ctx, st.SessionID, 3, 2)
	if err != nil || task.Source != SourceSearch || !strings.Contains(task.Warnings[0], "search is off") || !strings.Contains(task.Content, "generate-phase-files") {
		t.Fatalf("task 3/2 = %+v, %v", task, err)
	}
}

// TestDynamicSessionSurvivesRestartAndSpecEdits: the plan is stored with
// the session. After the engine is reopened on the same database and
// tasks.md gains a phase, the running session keeps its three phases and
// says the file changed; a new session gets four.
func TestDynamicSessionSurvivesRestartAndSpecEdits(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	workflowtest.Project(t, root)
	dbPath := filepath.Join(t.TempDir(), "berth.db")
	db := storetest.Open(t, dbPath)
	ctx := context.Background()
	e := openEngine(t, db, root, "p")
	st, err := e.Start(ctx, "feature_delivery_v1", "feature", map[string]any{"spec_path": workflowtest.SpecPath})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.CompletePhase(ctx, st.SessionID, 0, map[string]any{"spec_read": true, "phases_found": 2, "tasks_found": 3}, false); err != nil || !res.CheckpointPassed {
		t.Fatalf("phase 0: %+v, %v", res, err)
	}
	e.Close()
	tasks := filepath.Join(root, filepath.FromSlash(workflowtest.SpecPath), "tasks.md")
	f, err := os.OpenFile(tasks, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## Phase 3: Docs\n\n- [ ] **Task 3.1**: Write the guide\n")
	f.Close()

	e2 := openEngine(t, db, root, "p")
	state, err := e2.State(ctx, st.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Phases) != 3 || state.TotalPhases != 3 || state.CurrentPhase != 1 || state.Source == nil || !state.Source.Changed ||
		len(state.Warnings) != 1 || !strings.Contains(state.Warnings[0], "changed since the session started") {
		t.Fatalf("state after restart and edit = %+v", state)
	}
	if res, err := e2.CompletePhase(ctx, st.SessionID, 1, map[string]any{"tasks_completed": []any{"1.1", "1.2"},
		"validation_gate": map[string]any{"migration_applied_in_ci": true, "Repository tests pass": "✅"}}, false); err != nil || !res.CheckpointPassed {
		t.Fatalf("phase 1 after restart: %+v, %v", res, err)
	}
	again, err := e2.Start(ctx, "feature_delivery_v1", "feature", map[string]any{"spec_path": workflowtest.SpecPath})
	if err != nil || !again.Resumed || again.TotalPhases != 3 || again.CurrentPhase != 2 {
		t.Fatalf("resume = %+v, %v", again, err)
	}
	fresh, err := e2.Start(ctx, "feature_delivery_v1", "feature-2", map[string]any{"spec_path": workflowtest.SpecPath + "/tasks.md"})
	if err != nil || fresh.TotalPhases != 4 || fresh.Overview.Phases[3].PhaseName != "Docs" {
		t.Fatalf("new session = %+v, %v", fresh, err)
	}
}

// TestDynamicStartRefusals: a dynamic workflow without its source option,
// or with a source that is missing, outside, or has no phases.
func TestDynamicStartRefusals(t *testing.T) {
	e, root := compatProject(t)
	ctx := context.Background()
	os.WriteFile(filepath.Join(root, "empty.md"), []byte("# Nothing\n\nno phases here\n"), 0o644)
	for _, tc := range []struct {
		options map[string]any
		want    string
	}{
		{nil, "needs options.spec_path"},
		{map[string]any{"spec_path": 7}, "must be a path as text"},
		{map[string]any{"spec_path": "specs/none"}, "specs/none does not exist"},
		{map[string]any{"spec_path": "../outside"}, "not a path inside the project"},
		{map[string]any{"spec_path": "/etc"}, "outside the project"},
		{map[string]any{"spec_path": "empty.md"}, "holds no phases"},
	} {
		_, err := e.Start(ctx, "feature_delivery_v1", "x", tc.options)
		wantKind(t, err, ErrDynamicSource)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: %v, want %q", tc.options, err, tc.want)
		}
	}
	if l, _ := e.Sessions(ctx, ""); l.Count != 0 {
		t.Errorf("refused starts left %d sessions", l.Count)
	}
}
