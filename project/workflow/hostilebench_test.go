//go:build hostilebench

package workflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store"
)

// BenchmarkHostileInputs measures what the hostile inputs of a repository
// and a client cost the engine's process, one call each: CPU time and peak
// resident growth (workflowtest.Measure). It runs on this tree and, through
// docs/bench/workflow-hostile.sh, on an older one, so that the two can be
// compared in one run; hostilebench_open_test.go is what differs between
// the trees. Run it alone: go test ./project/workflow -tags hostilebench
// -run '^$' -bench HostileInputs -benchtime 1x.
func BenchmarkHostileInputs(b *testing.B) {
	ctx := context.Background()
	report := func(b *testing.B, c workflowtest.Cost, note string) {
		b.ReportMetric(float64(c.CPU)/float64(time.Millisecond), "cpu-ms")
		b.ReportMetric(float64(c.Peak)/(1<<20), "peak-MiB")
		b.ReportMetric(0, "ns/op")
		b.Log(note)
	}
	b.Run("validator_len_list_50M", func(b *testing.B) {
		e := hbGated(b, "a", "checkpoint: {strict: true}\nevidence_schema:\n  n: {type: integer, required: true, validator: huge}\nvalidators:\n  huge: \"lambda x: len([0] * 50000000) > 0\"\n")
		st, err := e.Start(ctx, "gated_v1", "x", nil)
		if err != nil {
			b.Fatal(err)
		}
		var res CompleteResult
		c := workflowtest.Measure(func() { res, err = e.CompletePhase(ctx, st.SessionID, 1, map[string]any{"n": 1}, false) })
		report(b, c, fmt.Sprint(res.CheckpointPassed, " ", hbShort(strings.Join(res.Errors, ";")), " ", err))
	})
	b.Run("pattern_10x1000_over_20KB", func(b *testing.B) {
		e := hbGated(b, "c", "checkpoint: {strict: true}\nevidence_schema:\n  s: {type: string, required: true, pattern: \""+strings.Repeat(".{1000}", 10)+"z\"}\n")
		var res CompleteResult
		var err error
		c := workflowtest.Measure(func() {
			var st StartResult
			if st, err = e.Start(ctx, "gated_v1", "x", nil); err == nil {
				res, err = e.CompletePhase(ctx, st.SessionID, 1, map[string]any{"s": strings.Repeat("a", 20000)}, false)
			}
		})
		report(b, c, fmt.Sprint(res.CheckpointPassed, " ", hbShort(strings.Join(res.Errors, ";")), " ", hbShort(fmt.Sprint(err))))
	})
	b.Run("template_40KB_2000_placeholders", func(b *testing.B) {
		tmpl := strings.Repeat("[PHASE_DESCRIPTION]", 2000) + strings.Repeat("x", 40000-2000*19)
		e := hbDynamic(b, "d", tmpl, "## Phase 1: A\n\n**Objective:** "+strings.Repeat("o", 5000)+"\n\n- [ ] **Task 1.1**: x\n")
		var res StartResult
		var err error
		c := workflowtest.Measure(func() { res, err = e.Start(ctx, "dyn_v1", "x", map[string]any{"spec_path": "spec"}) })
		n := 0
		if res.Phase != nil {
			n = len(res.Phase.Content)
		}
		report(b, c, fmt.Sprint("content ", n, " bytes ", hbShort(fmt.Sprint(err))))
	})
	for _, tc := range []struct{ name, body string }{
		{"tasksmd_50KB_links", strings.Repeat("[a](", 12500)},
		{"tasksmd_50KB_emphasis", strings.Repeat("_a**", 12500)},
		{"tasksmd_50KB_quotes", strings.Repeat(">", 50000)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := hbDynamic(b, "e", "# [PHASE_NAME]\n", "## Phase 1: A\n\n- [ ] **Task 1.1**: x\n\n"+tc.body+"\n")
			var err error
			c := workflowtest.Measure(func() { _, err = e.Start(ctx, "dyn_v1", "x", map[string]any{"spec_path": "spec"}) })
			report(b, c, hbShort(fmt.Sprint(err)))
		})
	}
	// A 16 MiB praxis-os state file of empty objects: the open that imports
	// it, then get_workflow_state and list_workflow_sessions.
	var state strings.Builder
	state.WriteString(`{"session_id": "huge", "workflow_type": "bug_fix_v1", "target_file": "x", "current_phase": 1, "metadata": {"total_phases": 3`)
	for i := 0; state.Len() < (16<<20)-64; i++ {
		fmt.Fprintf(&state, `, "k%d": {}`, i)
	}
	state.WriteString("}}")
	var huge *Engine
	outer := b // the engine lives on for the next two
	b.Run("state_16MiB_open", func(b *testing.B) {
		root := newProject(outer)
		hbWrite(b, root, map[string]string{".praxis-os/.cache/state/huge.json": state.String()})
		db := storetest.Open(outer, filepath.Join(outer.TempDir(), "b.db"))
		c := workflowtest.Measure(func() { huge = hbOpen(outer, db, root, "g") })
		report(b, c, fmt.Sprint(huge.Imported().Imported, " imported"))
	})
	b.Run("state_16MiB_get_workflow_state", func(b *testing.B) {
		var st StateResult
		var err error
		c := workflowtest.Measure(func() { st, err = huge.State(ctx, "huge") })
		report(b, c, fmt.Sprint(len(st.Metadata), " metadata keys ", hbShort(fmt.Sprint(err))))
	})
	b.Run("state_16MiB_list_workflow_sessions", func(b *testing.B) {
		c := workflowtest.Measure(func() { huge.Sessions(ctx, "") })
		report(b, c, "")
	})
	// Another project's start_workflow while a slow gate is checked: the
	// stall is its wall time (hbSlowGate is the slowest gate of each tree).
	b.Run("other_project_start_during_slow_gate", func(b *testing.B) {
		slow := hbGated(b, "slow", hbSlowGate)
		quick := hbGated(b, "quick", "evidence_schema:\n  done: {type: boolean}\n")
		st, err := slow.Start(ctx, "gated_v1", "x", nil)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan time.Duration, 1)
		go func() {
			t0 := time.Now()
			slow.CompletePhase(ctx, st.SessionID, 1, hbSlowEvidence, false)
			done <- time.Since(t0)
		}()
		time.Sleep(300 * time.Millisecond)
		t0 := time.Now()
		if _, err := quick.Start(ctx, "gated_v1", "y", nil); err != nil {
			b.Fatal(err)
		}
		other := time.Since(t0)
		check := <-done
		b.ReportMetric(float64(other)/float64(time.Millisecond), "stall-ms")
		b.ReportMetric(float64(check)/float64(time.Millisecond), "gate-ms")
		b.ReportMetric(0, "ns/op")
	})
}

func hbWrite(tb testing.TB, root string, files map[string]string) {
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

var hbDB = map[testing.TB]*store.DB{}

func hbGated(tb testing.TB, id, gate string) *Engine {
	root := tb.TempDir()
	hbWrite(tb, root, map[string]string{
		".praxis-os/workflows/gated_v1/metadata.json":                 `{"workflow_type": "gated_v1", "total_phases": 2, "phases": [{"phase_number": 1, "phase_name": "Gated"}, {"phase_number": 2, "phase_name": "After"}]}`,
		".praxis-os/workflows/gated_v1/phases/1/phase.md":             "# Phase 1\n",
		".praxis-os/workflows/gated_v1/phases/1/gate-definition.yaml": gate,
		".praxis-os/workflows/gated_v1/phases/2/phase.md":             "# Phase 2\n",
	})
	return hbOpen(tb, hbSharedDB(tb), root, id)
}

func hbDynamic(tb testing.TB, id, tmpl, tasks string) *Engine {
	root := tb.TempDir()
	hbWrite(tb, root, map[string]string{
		".praxis-os/workflows/dyn_v1/metadata.json":                    `{"workflow_type": "dyn_v1", "total_phases": "dynamic", "dynamic_phases": true, "dynamic_config": {"source_path_key": "spec_path", "parser": "spec_tasks_parser", "templates": {"phase": "phases/dynamic/phase-template.md", "task": "phases/dynamic/task-template.md"}}, "phases": [{"phase_number": "1-N", "phase_name": "Spec"}]}`,
		".praxis-os/workflows/dyn_v1/phases/dynamic/phase-template.md": tmpl,
		".praxis-os/workflows/dyn_v1/phases/dynamic/task-template.md":  "# [TASK_ID]\n",
		"spec/tasks.md": tasks,
	})
	return hbOpen(tb, hbSharedDB(tb), root, id)
}

// hbSharedDB is one database per (sub-)benchmark, shared by its projects
// as berth.db is shared by a broker's.
func hbSharedDB(tb testing.TB) *store.DB {
	if db, ok := hbDB[tb]; ok {
		return db
	}
	db := storetest.Open(tb, filepath.Join(tb.TempDir(), "b.db"))
	hbDB[tb] = db
	return db
}

func hbShort(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 100 {
		return s[:100]
	}
	return s
}
