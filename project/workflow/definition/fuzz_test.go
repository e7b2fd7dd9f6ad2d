package definition

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

// FuzzParseMetadata checks that any input either parses into metadata that
// honours the documented limits, or fails with an error; never a panic.
func FuzzParseMetadata(f *testing.F) {
	for _, tc := range loadCases {
		if m, ok := tc.files["demo_v1/metadata.json"]; ok {
			f.Add([]byte(m))
		}
	}
	f.Add([]byte(`{"total_phases":"dynamic","phases":[{"phase_number":0}]}`))
	f.Add([]byte(`{"total_phases":"3","phases":[{"phase_number":1,"tasks":[{"task_number":1,"file":"../x"}]}]}`))
	f.Add([]byte(`{"total_phases":2.5}`))
	f.Add([]byte("{\n  \"total_phases\": 2,\n  oops\n}"))
	if data, err := os.ReadFile(filepath.Join("..", "testdata", "workflows", "bug_fix_v1", "metadata.json")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ParseMetadata(data)
		if err != nil {
			return
		}
		if !m.Dynamic() && (m.TotalPhases.Count < 1 || m.TotalPhases.Count > maxPhases) {
			t.Fatalf("accepted total_phases %d", m.TotalPhases.Count)
		}
		seen := map[int]bool{}
		for _, p := range m.Phases {
			if p.PhaseNumber.Range != "" {
				if !m.Dynamic() {
					t.Fatalf("accepted range %q in a static workflow", p.PhaseNumber.Range)
				}
				continue
			}
			if p.PhaseNumber.N < 0 || seen[p.PhaseNumber.N] {
				t.Fatalf("accepted phase number %d (negative or repeated)", p.PhaseNumber.N)
			}
			seen[p.PhaseNumber.N] = true
			for _, task := range p.Tasks {
				if task.TaskNumber < 0 || (task.File != "" && task.File != unsafeFile && !isPlainName(task.File)) {
					t.Fatalf("accepted task %+v", task)
				}
			}
		}
		// What was accepted must survive a round trip.
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal accepted metadata: %v", err)
		}
		if _, _, err := ParseMetadata(out); err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
	})
}

// FuzzParseGate checks that any input either fails or gives a gate whose
// fields have canonical types and whose Check never panics, never returns
// nil slices and costs the broker within a request's budget, whatever the
// evidence (its patterns, validators and rules included: the lambdas run
// in a child, under its limits).
func FuzzParseGate(f *testing.F) {
	for _, tc := range gateCases {
		f.Add([]byte(tc.yaml), []byte(`{"count": 3, "name": "ab", "x": [1, {"y": null}]}`))
	}
	f.Add([]byte(checkGate), []byte(`{"passed": 1e308, "failed": -0, "summary": "fix", "files": [[]], "meta": {"": ""}}`))
	f.Add([]byte("evidence_schema:\n  s: {type: string, pattern: \""+strings.Repeat(".{100}", 5)+"z\"}\n"), []byte(`{"s": "`+strings.Repeat("a", 20000)+`"}`))
	f.Add([]byte("evidence_schema:\n  n: {type: integer, validator: v}\nvalidators:\n  v: \"lambda x: len([0] * 500000000) > x\"\n"), []byte(`{"n": 1}`))
	f.Add([]byte("cross_field_validation:\n  - rule: \"lambda e: sum(range(1000000000)) > 0\"\n"), []byte(`{}`))
	f.Fuzz(func(t *testing.T, gate, evidence []byte) {
		g, _, err := ParseGate(gate)
		if err != nil {
			return
		}
		for _, fl := range g.Fields {
			if _, ok := typeAliases[fl.Type]; !ok || typeAliases[fl.Type] != fl.Type {
				t.Fatalf("field %q has non-canonical type %q", fl.Name, fl.Type)
			}
			if fl.Min != nil && fl.Max != nil && *fl.Min > *fl.Max {
				t.Fatalf("accepted min > max on %q", fl.Name)
			}
		}
		var ev map[string]any
		if json.Unmarshal(evidence, &ev) != nil {
			return
		}
		var r Result
		cost := workflowtest.MeasureQuick(func() { r = check(t, g, ev) })
		workflowtest.Request.Check(t, "a gate check", cost)
		if r.Errors == nil || r.Warnings == nil || r.FieldsMissing == nil {
			t.Fatal("nil slice in result")
		}
		if len(r.FieldsMissing) > len(r.Errors) {
			t.Fatalf("%d missing fields but %d errors", len(r.FieldsMissing), len(r.Errors))
		}
	})
}
