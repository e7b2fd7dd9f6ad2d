package definition

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadExampleWorkflow(t *testing.T) {
	ws, err := LoadAll(filepath.Join("..", "testdata", "workflows"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 {
		t.Fatalf("got %d workflows, want 1", len(ws))
	}
	w := ws[0]
	if w.Err != nil {
		t.Fatalf("example workflow is broken: %v", w.Err)
	}
	if w.Type != "bug_fix_v1" || w.FirstPhase != 1 || w.TotalPhases() != 3 || w.LastPhase() != 3 {
		t.Fatalf("type %q first %d total %d", w.Type, w.FirstPhase, w.TotalPhases())
	}
	p2, ok := w.Phase(2)
	if !ok || !p2.Gate.Strict || len(p2.Gate.Fields) != 4 || len(p2.Tasks) != 2 {
		t.Fatalf("phase 2 = %+v", p2)
	}
	p3, _ := w.Phase(3)
	if p3.Gate.Source != "permissive" {
		t.Fatalf("phase 3 gate source %q, want permissive", p3.Gate.Source)
	}
	p1, _ := w.Phase(1)
	if p1.Gate.Strict || len(p1.Gate.Rules) != 1 {
		t.Fatalf("phase 1 gate = %+v", p1.Gate)
	}
	task, ok := p1.Task(2)
	if !ok {
		t.Fatal("phase 1 task 2 missing")
	}
	body, err := w.ReadFile(task.File)
	if err != nil || !strings.Contains(body, "Locate the cause") {
		t.Fatalf("task content %q, %v", body, err)
	}
}

// loadCases are the definition-loading table; their metadata.json files also
// seed FuzzParseMetadata.
var loadCases = []struct {
	name      string
	files     map[string]string
	wantErr   string // substring of Err; "" means valid
	wantWarn  string // substring of one warning
	check     func(t *testing.T, w *Workflow)
	wantFirst int
}{
	{name: "valid", files: minimalTree, wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		p2, _ := w.Phase(2)
		if len(p2.Tasks) != 1 || p2.Tasks[0].File != "phases/2/task-1-found-by-name.md" || p2.Tasks[0].Name != "found by name" {
			t.Errorf("discovered tasks = %+v", p2.Tasks)
		}
		p1, _ := w.Phase(1)
		if !p1.Gate.Strict || p2.Gate.Source != "permissive" {
			t.Errorf("gates: %+v %+v", p1.Gate, p2.Gate)
		}
	}},
	{name: "zero indexed", wantFirst: 0, files: map[string]string{
		"demo_v1/metadata.json":     `{"workflow_type":"demo_v1","total_phases":2,"phases":[{"phase_number":0,"phase_name":"Zero"},{"phase_number":1,"phase_name":"One"}]}`,
		"demo_v1/phases/0/phase.md": "zero", "demo_v1/phases/1/phase.md": "one",
	}},
	{name: "unknown keys ignored", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json":                 strings.Replace(minimalMetadata, `"version": "1.0",`, `"version": 2, "quality_gates": {"x": 1}, "target_language": ["any"], "created": "2025-10-13",`, 1),
		"demo_v1/phases/1/gate-definition.yaml": strictGate + "future_section:\n  anything: [1, 2]\n",
	}), wantFirst: 1},
	{name: "metadata missing", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": ""}), wantErr: "metadata.json is missing"},
	{name: "broken JSON", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": "{\n  \"total_phases\": 2,\n  oops\n}"}), wantErr: "line 3"},
	{name: "wrong JSON type", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": `{"total_phases": 2, "phases": {"a": 1}}`}), wantErr: "invalid JSON"},
	{name: "total_phases missing", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": `{"workflow_type":"demo_v1"}`}), wantErr: "total_phases is missing"},
	{name: "total_phases zero", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": `{"total_phases":0}`}), wantErr: "out of range"},
	{name: "total_phases text", files: with(minimalTree, map[string]string{"demo_v1/metadata.json": `{"total_phases":"many"}`}), wantErr: "neither a number"},
	{name: "phase.md missing", files: with(minimalTree, map[string]string{"demo_v1/phases/2/phase.md": ""}), wantFirst: 1, wantWarn: "phases/2/phase.md is missing (phase 2): its overview is answered from the standards search",
		check: func(t *testing.T, w *Workflow) {
			if p, _ := w.Phase(2); !p.Missing {
				t.Error("phase 2 not marked missing")
			}
		}},
	{name: "phase folder missing", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"total_phases": 2`, `"total_phases": 3`, 1),
	}), wantFirst: 1, wantWarn: "phases/3/ is missing (phase 3 \"Phase 3\"): its overview and tasks are answered from the standards search"},
	{name: "task file missing", files: with(minimalTree, map[string]string{"demo_v1/phases/1/task-1-only.md": ""}), wantFirst: 1, wantWarn: "phases/1/task-1-only.md is missing (task 1): get_task answers from the standards search",
		check: func(t *testing.T, w *Workflow) {
			p, _ := w.Phase(1)
			if task, ok := p.Task(1); !ok || !task.Missing {
				t.Errorf("task 1 = %+v", task)
			}
		}},
	{name: "task file escapes", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `task-1-only.md`, `../../secret.md`, 1),
	}), wantFirst: 1, wantWarn: "must be a file name inside phases/1/: it is not read", check: func(t *testing.T, w *Workflow) {
		p, _ := w.Phase(1)
		if task, ok := p.Task(1); !ok || !task.Missing || task.File != "" {
			t.Errorf("escaping task = %+v", task)
		}
	}},
	{name: "phase out of range", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": 7`, 1),
	}), wantFirst: 1, wantWarn: "lists phase 7, but total_phases 2 means phases 1-2: that entry is ignored"},
	{name: "duplicate phase", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": 1`, 1),
	}), wantErr: "listed twice"},
	{name: "broken YAML", files: with(minimalTree, map[string]string{"demo_v1/phases/1/gate-definition.yaml": "checkpoint: [strict: true\n"}), wantErr: "gate-definition.yaml: invalid YAML"},
	{name: "gate unknown type", files: with(minimalTree, map[string]string{"demo_v1/phases/1/gate-definition.yaml": "evidence_schema:\n  x:\n    type: tuple\n"}), wantErr: `unknown type "tuple"`},
	{name: "type name differs", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"workflow_type": "demo_v1"`, `"workflow_type": "demo"`, 1),
	}), wantFirst: 1, wantWarn: `names workflow_type "demo"`},
	{name: "python validators compiled", files: with(minimalTree, map[string]string{
		"demo_v1/phases/1/gate-definition.yaml": strictGate + "validators:\n  positive: \"lambda x: x > 0\"\n",
	}), wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		if p, _ := w.Phase(1); len(p.Gate.Validators) != 1 {
			t.Errorf("validators = %+v", p.Gate.Validators)
		}
	}},
	{name: "validator that cannot run", files: with(minimalTree, map[string]string{
		"demo_v1/phases/1/gate-definition.yaml": strictGate + "validators:\n  v: \"lambda x: 1 < x < 3\"\n",
	}), wantErr: "phases/1/gate-definition.yaml: line 9: validators.v"},
	{name: "task zero and phase zero", wantFirst: 0, files: map[string]string{
		"demo_v1/metadata.json":                      `{"workflow_type":"demo_v1","total_phases":1,"phases":[{"phase_number":0,"phase_name":"Zero","tasks":[{"task_number":0,"name":"first","file":"task-0-first.md"},{"task_number":1,"name":"second","file":"task-1-second.md"}]}]}`,
		"demo_v1/phases/0/phase.md":                  "zero",
		"demo_v1/phases/0/task-0-first.md":           "first",
		"demo_v1/phases/0/task-1-second.md":          "second",
		"demo_v1/phases/0/task-2-not-in-metadata.md": "unlisted",
	}, wantWarn: "holds task files metadata.json does not list (task-2-not-in-metadata.md)", check: func(t *testing.T, w *Workflow) {
		p, _ := w.Phase(0)
		if task, ok := p.Task(0); !ok || task.File != "phases/0/task-0-first.md" || task.Missing {
			t.Errorf("task 0 = %+v", task)
		}
	}},
	{name: "range in a static workflow", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": "2-N"`, 1),
	}), wantErr: `phase_number "2-N" stands for dynamic phases, but the workflow is not dynamic`},
	{name: "phase number as text", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": "2"`, 1),
	}), wantFirst: 1},
	{name: "bad phase number", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": "two"`, 1),
	}), wantErr: `phase_number "two" is neither a number nor a range`},
	{name: "dynamic", files: dynamicTree, wantFirst: 0, check: func(t *testing.T, w *Workflow) {
		d := w.Dynamic
		if !w.IsDynamic() || len(w.Phases) != 1 || d == nil || d.SourceKey != "spec_path" || d.Parser != "spec_tasks_parser" ||
			d.PhaseTemplate != DefaultPhaseTemplate || d.Range != "1-N" || d.Block == nil || d.Block.Name != "Dynamic phases" {
			t.Errorf("dynamic = %+v, phases %d", d, len(w.Phases))
		}
	}},
	{name: "dynamic without config", files: with(dynamicTree, map[string]string{
		"demo_v1/metadata.json": `{"workflow_type":"demo_v1","total_phases":"dynamic","phases":[{"phase_number":0,"phase_name":"Plan"}]}`,
	}), wantErr: "has no dynamic_config: add"},
	{name: "dynamic_phases flag without config", files: with(dynamicTree, map[string]string{
		"demo_v1/metadata.json": `{"workflow_type":"demo_v1","total_phases":5,"dynamic_phases":true,"phases":[]}`,
	}), wantErr: "has no dynamic_config"},
	{name: "dynamic unknown parser", files: with(dynamicTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(dynamicMetadata, `"parser": "spec_tasks_parser"`, `"parser": "jira"`, 1),
	}), wantErr: `dynamic_config.parser "jira" is not one Berth has`},
	{name: "dynamic template missing", files: with(dynamicTree, map[string]string{"demo_v1/phases/dynamic/task-template.md": ""}),
		wantErr: "phases/dynamic/task-template.md is missing (dynamic_config.templates.task)"},
	{name: "skippable phase", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_name": "One",`, `"phase_name": "One", "skippable": true, "skip_condition": "No supporting_docs in options",`, 1),
	}), wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		if p, _ := w.Phase(1); !p.Skippable || p.SkipOption != "supporting_docs" {
			t.Errorf("phase 1 = %+v", p)
		}
	}},
	{name: "skip condition not evaluable", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_name": "One",`, `"phase_name": "One", "skippable": "true", "skip_condition": "When the moon is full",`, 1),
	}), wantFirst: 1, wantWarn: `skip_condition "When the moon is full" is not a form Berth evaluates`},
	{name: "metadata checkpoint is the gate", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_name": "Two",`, `"phase_name": "Two", "checkpoint": {"required_evidence": ["a", "b"]},`, 1),
	}), wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		p, _ := w.Phase(2)
		if g := p.Gate; g.Source != "metadata" || !g.Strict || len(g.Fields) != 2 || !g.Fields[1].Required || g.Fields[1].Type != TypeAny {
			t.Errorf("gate = %+v", g)
		}
	}},
	{name: "metadata checkpoint beside a gate file", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_name": "One",`, `"phase_name": "One", "checkpoint": {"required_evidence": {"done": "boolean", "extra": {"type": "string"}}},`, 1),
	}), wantFirst: 1, wantWarn: "phase 1 checkpoint.required_evidence names extra, which phases/1/gate-definition.yaml does not declare: the gate file governs"},
	{name: "phase_file names the overview", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json":        strings.Replace(minimalMetadata, `"phase_name": "Two",`, `"phase_name": "Two", "phase_file": "phases/2/overview.md",`, 1),
		"demo_v1/phases/2/overview.md": "# Two",
	}), wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		if p, _ := w.Phase(2); p.File != "phases/2/overview.md" || p.Missing {
			t.Errorf("phase 2 = %+v", p)
		}
	}},
}

func TestLoadTable(t *testing.T) {
	for _, tc := range loadCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, t.TempDir(), tc.files)
			ws, err := LoadAll(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != 1 {
				t.Fatalf("got %d workflows, want 1 (a broken one is still listed)", len(ws))
			}
			w := ws[0]
			switch {
			case tc.wantErr == "" && w.Err != nil:
				t.Fatalf("unexpected error: %v", w.Err)
			case tc.wantErr != "" && w.Err == nil:
				t.Fatalf("no error, want %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(w.Err.Error(), tc.wantErr):
				t.Fatalf("error %q does not contain %q", w.Err, tc.wantErr)
			}
			if tc.wantWarn != "" && !strings.Contains(strings.Join(w.Warnings, "\n"), tc.wantWarn) {
				t.Errorf("warnings %q do not contain %q", w.Warnings, tc.wantWarn)
			}
			if tc.wantErr == "" && w.FirstPhase != tc.wantFirst {
				t.Errorf("first phase %d, want %d", w.FirstPhase, tc.wantFirst)
			}
			if tc.check != nil {
				tc.check(t, w)
			}
		})
	}
}

func TestLoadAllSkipsAndMissingDir(t *testing.T) {
	ws, err := LoadAll(filepath.Join(t.TempDir(), "absent"))
	if err != nil || len(ws) != 0 {
		t.Fatalf("missing folder: %v, %d workflows", err, len(ws))
	}
	dir := writeTree(t, t.TempDir(), with(minimalTree, map[string]string{
		".hidden/metadata.json": "{", "_drafts/metadata.json": "{", "README.md": "# workflows",
		"empty_v1/notes.md": "no metadata here",
	}))
	ws, err = LoadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Type != "demo_v1" || ws[1].Type != "empty_v1" || ws[1].Err == nil {
		t.Fatalf("got %d workflows: %+v", len(ws), ws)
	}
}

func TestReadFileStaysInside(t *testing.T) {
	dir := writeTree(t, t.TempDir(), with(minimalTree, map[string]string{"secret.txt": "secret"}))
	w := Load(dir, "demo_v1")
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	if _, err := w.ReadFile("../secret.txt"); err == nil {
		t.Fatal("read outside the workflow folder succeeded")
	}
}

// TestLoadPraxisFormatWorkflows loads the five workflows written in
// praxis-os's format: each is ready, numbered from phase 0 as praxis-os's
// metadata standard asks, and the warnings name what Berth serves from
// search or ignores.
func TestLoadPraxisFormatWorkflows(t *testing.T) {
	ws, err := LoadAll(filepath.Join("..", "testdata", "praxis-format"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"db_migration_v1", "design_doc_v1", "feature_delivery_v1", "runbook_writing_v1", "workflow_scaffold_v1"}
	if len(ws) != len(want) {
		t.Fatalf("got %d workflows, want %d", len(ws), len(want))
	}
	byType := map[string]*Workflow{}
	for i, w := range ws {
		if w.Type != want[i] {
			t.Fatalf("workflow %d is %q, want %q", i, w.Type, want[i])
		}
		if w.Err != nil {
			t.Errorf("%s is broken: %v", w.Type, w.Err)
		}
		if w.FirstPhase != 0 {
			t.Errorf("%s starts at phase %d, want 0", w.Type, w.FirstPhase)
		}
		byType[w.Type] = w
	}

	db := byType["db_migration_v1"]
	for n, strict := range []bool{true, false, true, false} {
		p, _ := db.Phase(n)
		if p.Gate.Source != "yaml" || p.Gate.Strict != strict || p.File != fmt.Sprintf("phases/%d/phase.md", n) {
			t.Errorf("db_migration_v1 phase %d: gate %s strict %v, file %s", n, p.Gate.Source, p.Gate.Strict, p.File)
		}
	}
	p0, _ := db.Phase(0)
	if len(p0.Gate.Validators) != 2 || len(p0.Gate.Rules) != 1 || p0.Gate.Fields[3].ValidatorParams["max_val"] != 30 {
		t.Errorf("db_migration_v1 phase 0 gate = %+v", p0.Gate)
	}
	if len(db.Warnings) != 0 {
		t.Errorf("db_migration_v1 warnings: %q", db.Warnings)
	}

	dd := byType["design_doc_v1"]
	d0, _ := dd.Phase(0)
	if task, ok := d0.Task(0); !ok || task.File != "phases/0/task-0-create-folder.md" || !d0.Skippable || d0.SkipOption != "reference_docs" {
		t.Errorf("design_doc_v1 phase 0 = %+v", d0)
	}
	if d3, _ := dd.Phase(3); d3.Gate.Source != "metadata" || !d3.Gate.Strict || len(d3.Gate.Fields) != 2 || d3.Gate.Fields[0].Name != "approved" || d3.Gate.Fields[0].Type != TypeBoolean {
		t.Errorf("design_doc_v1 phase 3 gate = %+v", d3.Gate)
	}
	if warns := strings.Join(dd.Warnings, "\n"); !strings.Contains(warns, "names notes_taken") || !strings.Contains(warns, "names nfr_listed") {
		t.Errorf("design_doc_v1 warnings lack the required_evidence its gate files lack:\n%s", warns)
	}

	fd := byType["feature_delivery_v1"]
	if fd.Dynamic == nil || fd.Dynamic.Range != "1-N" || len(fd.Phases) != 1 || fd.Dynamic.Parser != "spec_tasks_parser" || fd.Dynamic.Block.Name != "The spec's phases" {
		t.Errorf("feature_delivery_v1 dynamic = %+v, %d static phases", fd.Dynamic, len(fd.Phases))
	}

	rb := byType["runbook_writing_v1"]
	for _, p := range rb.Phases {
		if p.Gate.Source != "permissive" {
			t.Errorf("runbook_writing_v1 phase %d has a %s gate", p.Number, p.Gate.Source)
		}
	}
	if r2, _ := rb.Phase(2); len(r2.Tasks) != 2 || r2.Tasks[1].File != "phases/2/task-2-fix-steps.md" || r2.Tasks[1].Name != "fix steps" {
		t.Errorf("runbook_writing_v1 phase 2 tasks (found by file name) = %+v", r2.Tasks)
	}

	ws5 := byType["workflow_scaffold_v1"]
	if len(ws5.Phases) != 5 {
		t.Fatalf("workflow_scaffold_v1 has %d phases, want 5", len(ws5.Phases))
	}
	if p4, _ := ws5.Phase(4); !p4.Missing || len(p4.Tasks) != 2 || !p4.Tasks[0].Missing {
		t.Errorf("workflow_scaffold_v1 phase 4 = %+v", p4)
	}
	warns := strings.Join(ws5.Warnings, "\n")
	for _, w := range []string{"phases/4/ is missing", "phases/3/task-1-load-target-definition.md is missing (task 1)",
		"does not list (task-1-audit-sizes.md, task-2-check-gates.md)", `names workflow_type "workflow_scaffold"`} {
		if !strings.Contains(warns, w) {
			t.Errorf("workflow_scaffold_v1 warnings lack %q:\n%s", w, warns)
		}
	}
	for _, w := range ws {
		for _, p := range w.Phases {
			if p.Gate == nil {
				t.Errorf("%s phase %d has no gate", w.Type, p.Number)
			}
		}
	}
}
