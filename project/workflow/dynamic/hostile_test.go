package dynamic

import (
	"context"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

// fillTo repeats unit in lines of about line bytes under a phase heading,
// up to size bytes.
func fillTo(unit string, line, size int) []byte {
	var b strings.Builder
	b.WriteString("## Phase 1: X\n\n")
	for b.Len() < size {
		b.WriteString(strings.Repeat(unit, max(1, (line-1)/len(unit))) + "\n")
	}
	return []byte(b.String()[:size])
}

// hostileUnits are the markdown that cost goldmark the most (links,
// emphasis, brackets, nested blocks), and others found with them.
var hostileUnits = []string{"[a](", "_a**", "[", "![", "*a", "`", "`a``", "<a ", "**a", "_*", "*a *", "> ", "- ", "1. ", "- [ ] **Task 1.1**: x ", "#", "    "}

// TestHostileTasksMDIsRefused: the inputs that cost minutes before are
// refused, each within the refusal budget: 400 KB of "[a](" (49 s of CPU
// before: over the size cap), 200 KB and 50 KB of ">" (15 s and 0.9 s: one
// line nesting that many quotes).
func TestHostileTasksMDIsRefused(t *testing.T) {
	cases := []struct {
		name, data, want string
	}{
		{"400 KB of [a](", "## Phase 1: X\n\n" + strings.Repeat("[a](", 100_000), "at most 262144 are read"},
		{"200 KB of >", "## Phase 1: X\n\n" + strings.Repeat(">", 200_000), "line 3 nests 200000 blocks"},
		{"50 KB of >", "## Phase 1: X\n\n" + strings.Repeat(">", 50_000), "line 3 nests 50000 blocks"},
		{"50 KB of - ", "## Phase 1: X\n\n" + strings.Repeat("- ", 25_000) + "x", "line 3 nests 25000 blocks"},
		{"1. repeated", "## Phase 1: X\n\n" + strings.Repeat("1. ", 17) + "x", "nests 17 blocks"},
	}
	for _, c := range cases {
		data := []byte(c.data)
		var err error
		cost := workflowtest.Measure(func() { _, err = Parse(ParserSpecTasks, data) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		workflowtest.Refusal.Check(t, c.name, cost)
	}
}

// TestHostileTasksMDAtTheCapIsBounded: the worst markdown found, filling
// the whole size cap in short and long lines, parses within a request's
// budget (linear time).
func TestHostileTasksMDAtTheCapIsBounded(t *testing.T) {
	for _, u := range hostileUnits {
		for _, line := range []int{8, 1 << 20} {
			data := fillTo(u, line, MaxSourceBytes)
			cost := workflowtest.Measure(func() { Parse(ParserSpecTasks, data) })
			workflowtest.Request.Check(t, "256 KiB of "+strings.TrimSpace(u), cost)
		}
	}
}

// TestHostileTemplateIsRefusedBeforeRendering: a 400 KB template holding
// [PHASE_DESCRIPTION] 20,000 times, with a 5,000-character objective
// (22.5 s and 1.5 GB before), is refused from its size, computed before
// anything is rendered.
func TestHostileTemplateIsRefusedBeforeRendering(t *testing.T) {
	tmpl := strings.Repeat("[PHASE_DESCRIPTION]", 20_000) + strings.Repeat("x", 400_000-20_000*len("[PHASE_DESCRIPTION]"))
	p := Phase{Name: "X", Description: strings.Repeat("d", 5000)}
	var err error
	cost := workflowtest.Measure(func() { _, err = RenderPhase(context.Background(), tmpl, p, 1) })
	if err == nil || !strings.Contains(err.Error(), "would be 100020000 bytes; at most 262144") || !strings.Contains(err.Error(), "[PHASE_DESCRIPTION], 20000 times") {
		t.Fatalf("err = %v", err)
	}
	workflowtest.Refusal.Check(t, "the 400 KB template", cost)

	// Just under the cap it renders, within a request's budget.
	tmpl = strings.Repeat("[PHASE_DESCRIPTION]", (MaxRenderedBytes-1)/5000)
	var out string
	cost = workflowtest.Measure(func() { out, err = RenderPhase(context.Background(), tmpl, p, 1) })
	if err != nil || len(out) != 5000*((MaxRenderedBytes-1)/5000) {
		t.Fatalf("render under the cap: %d bytes, %v", len(out), err)
	}
	workflowtest.Request.Check(t, "a template rendered to the cap", cost)
}

// TestRenderStopsWhenTheClientLeaves: a request whose context has ended
// renders nothing.
func TestRenderStopsWhenTheClientLeaves(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RenderTask(ctx, "[TASK_NAME]", Phase{}, 1, Task{Name: "x"}, 1); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// FuzzRender: any template and values render to the size computed before,
// or are refused, within a request's budget.
func FuzzRender(f *testing.F) {
	f.Add("# Phase [PHASE_NUMBER]: [PHASE_NAME]\n[PHASE_DESCRIPTION]\n[VALIDATION_GATE]", "Storage", "Store it", "gate")
	f.Add(strings.Repeat("[PHASE_DESCRIPTION][PHASE_NAME]", 100), strings.Repeat("n", 3000), strings.Repeat("d", 3000), "")
	f.Add("[TASK_ID] [NEXT_TASK_NUMBER] [[PHASE_NAME]] [PHASE_NAME", "[PHASE_NAME]", "", "[VALIDATION_GATE]")
	f.Fuzz(func(t *testing.T, tmpl, name, desc, gate string) {
		p := Phase{Name: name, Description: desc, ValidationGate: []string{gate}, Tasks: []Task{{ID: "1.1", Name: name}}}
		var out string
		var err error
		cost := workflowtest.MeasureQuick(func() { out, err = RenderPhase(context.Background(), tmpl, p, 1) })
		workflowtest.Request.Check(t, "rendering", cost)
		if err == nil && len(out) > MaxRenderedBytes {
			t.Fatalf("rendered %d bytes, over the cap", len(out))
		}
		if _, err := RenderTask(context.Background(), tmpl, p, 1, p.Tasks[0], 1); err != nil && !strings.Contains(err.Error(), "at most") {
			t.Fatalf("render task: %v", err)
		}
	})
}

// TestCheckPlanWithoutRendering: a plan is checked from the placeholders'
// counts, within the refusal budget, however large the result would be.
func TestCheckPlanWithoutRendering(t *testing.T) {
	tmpl := strings.Repeat("[TASK_NAME]", 20_000)
	p := Phase{Name: "P", Tasks: []Task{{ID: "1.1", Name: "small"}, {ID: "1.2", Name: strings.Repeat("n", 5000)}}}
	var err error
	cost := workflowtest.Measure(func() { err = CheckPlan("# [PHASE_NAME]", tmpl, []Phase{p}, 1) })
	if err == nil || !strings.Contains(err.Error(), "task 1.2 of phase 1: the rendered task would be 100000000 bytes") {
		t.Fatalf("err = %v", err)
	}
	workflowtest.Refusal.Check(t, "checking a plan", cost)
	if err := CheckPlan("# [PHASE_NAME]", "[TASK_NAME]", []Phase{p}, 1); err != nil {
		t.Fatalf("a plan that renders small: %v", err)
	}
}
