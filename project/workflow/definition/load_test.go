package definition

import (
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
	if p1.Gate.Strict || len(p1.Gate.Unsupported) != 1 {
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
	{name: "phase.md missing", files: with(minimalTree, map[string]string{"demo_v1/phases/2/phase.md": ""}), wantErr: "phases/2/phase.md is missing"},
	{name: "phase folder missing", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"total_phases": 2`, `"total_phases": 3`, 1),
	}), wantErr: "phases/3/ is missing", wantWarn: "no entry for phase 3"},
	{name: "task file missing", files: with(minimalTree, map[string]string{"demo_v1/phases/1/task-1-only.md": ""}), wantErr: "phases/1/task-1-only.md is missing"},
	{name: "task file escapes", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `task-1-only.md`, `../../secret.md`, 1),
	}), wantErr: "must be a file name inside phases/1/"},
	{name: "phase out of range", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": 7`, 1),
	}), wantErr: "lists phase 7"},
	{name: "duplicate phase", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"phase_number": 2`, `"phase_number": 1`, 1),
	}), wantErr: "listed twice"},
	{name: "broken YAML", files: with(minimalTree, map[string]string{"demo_v1/phases/1/gate-definition.yaml": "checkpoint: [strict: true\n"}), wantErr: "gate-definition.yaml: invalid YAML"},
	{name: "gate unknown type", files: with(minimalTree, map[string]string{"demo_v1/phases/1/gate-definition.yaml": "evidence_schema:\n  x:\n    type: tuple\n"}), wantErr: `unknown type "tuple"`},
	{name: "type name differs", files: with(minimalTree, map[string]string{
		"demo_v1/metadata.json": strings.Replace(minimalMetadata, `"workflow_type": "demo_v1"`, `"workflow_type": "demo"`, 1),
	}), wantFirst: 1, wantWarn: `names workflow_type "demo"`},
	{name: "python validators warn", files: with(minimalTree, map[string]string{
		"demo_v1/phases/1/gate-definition.yaml": strictGate + "validators:\n  positive: \"lambda x: x > 0\"\n",
	}), wantFirst: 1, wantWarn: "not checked (unsupported)"},
	{name: "dynamic", files: map[string]string{
		"demo_v1/metadata.json": `{"workflow_type":"demo_v1","total_phases":"dynamic","phases":[{"phase_number":0,"phase_name":"Plan"}]}`,
	}, wantFirst: 0, check: func(t *testing.T, w *Workflow) {
		if !w.Dynamic() || len(w.Phases) != 1 {
			t.Errorf("dynamic = %v phases %d", w.Dynamic(), len(w.Phases))
		}
	}},
	{name: "dynamic_phases flag", files: map[string]string{
		"demo_v1/metadata.json": `{"workflow_type":"demo_v1","total_phases":5,"dynamic_phases":true,"phases":[]}`,
	}, wantFirst: 1, check: func(t *testing.T, w *Workflow) {
		if !w.Dynamic() {
			t.Error("dynamic_phases true should make the workflow dynamic")
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
