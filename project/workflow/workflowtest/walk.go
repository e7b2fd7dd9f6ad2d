package workflowtest

import (
	"fmt"
	"slices"
	"strings"
)

// Transcript is what a walk saw, one entry per call, for comparing two
// ways of calling (the workflow tools and pos_workflow).
type Transcript []map[string]any

func (tr *Transcript) add(step string, out map[string]any) map[string]any {
	*tr = append(*tr, map[string]any{"step": step, "out": out})
	return out
}

// ListsReady checks that list_workflows names each of Workflows as ready.
func ListsReady(c *Client) {
	c.TB.Helper()
	list := c.Must("list_workflows", nil)
	ready := map[string]bool{}
	for _, w := range list["workflows"].([]any) {
		wm := w.(map[string]any)
		if wm["status"] == "ready" {
			ready[wm["workflow_type"].(string)] = true
		} else {
			c.TB.Errorf("%v is %v: %v", wm["workflow_type"], wm["status"], wm["error"])
		}
	}
	for _, w := range Workflows {
		if !ready[w] {
			c.TB.Errorf("%s is not listed as ready", w)
		}
	}
}

// WalkFirstPhases starts workflowType on target and walks its first two
// phases (or fewer, when it has fewer) with valid or invalid evidence. It
// reads each phase's first task, and checks what the gate answers:
// valid evidence passes with no problem; invalid evidence is refused by a
// strict gate (the walk then sends valid evidence) and passes a
// non-strict one with every problem as a warning, as praxis-os does.
func WalkFirstPhases(c *Client, workflowType, target string, options map[string]any, valid bool) Transcript {
	c.TB.Helper()
	var tr Transcript
	args := map[string]any{"workflow_type": workflowType, "target_file": target}
	if options != nil {
		args["options"] = options
	}
	start := tr.add("start", c.Must("start_workflow", args))
	sid, _ := start["session_id"].(string)
	if start["resumed"] != false || sid == "" {
		c.TB.Fatalf("%s: start = %v", workflowType, start)
	}
	phases, _ := Dig(start, "workflow_overview", "phases").([]any)
	if len(phases) != Num(start["total_phases"]) || len(phases) == 0 {
		c.TB.Fatalf("%s: overview lists %d phases, total_phases %v", workflowType, len(phases), start["total_phases"])
	}
	phase, _ := start["phase"].(map[string]any)
	for step := 0; step < 2 && phase != nil; step++ {
		n := Num(phase["phase_number"])
		if content, _ := phase["content"].(string); strings.TrimSpace(content) == "" {
			c.TB.Errorf("%s phase %d: empty content (source %v)", workflowType, n, phase["source"])
		}
		if tasks, _ := phase["tasks"].([]any); len(tasks) > 0 {
			k := Num(Dig(tasks, 0, "task_number"))
			task := tr.add(fmt.Sprintf("get_task %d/%d", n, k), c.Must("get_task", map[string]any{"session_id": sid, "phase": n, "task_number": k}))
			if content, _ := task["content"].(string); strings.TrimSpace(content) == "" {
				c.TB.Errorf("%s task %d/%d: empty content", workflowType, n, k)
			}
		}
		gate, _ := phase["gate"].(map[string]any)
		res := tr.add(fmt.Sprintf("complete %d", n), c.Must("complete_phase", map[string]any{"session_id": sid, "phase": n, "evidence": Evidence(gate, valid)}))
		checkGateAnswer(c, workflowType, n, gate, res, valid)
		if res["checkpoint_passed"] != true {
			res = tr.add(fmt.Sprintf("complete %d again", n), c.Must("complete_phase", map[string]any{"session_id": sid, "phase": n, "evidence": Evidence(gate, true)}))
			if res["checkpoint_passed"] != true {
				c.TB.Fatalf("%s phase %d: valid evidence refused: %v", workflowType, n, res["errors"])
			}
		}
		phase, _ = res["next_phase_content"].(map[string]any)
		if next := Num(res["next_phase"]); phase != nil && Num(phase["phase_number"]) != next {
			c.TB.Fatalf("%s: next_phase %d but next_phase_content is phase %v", workflowType, next, phase["phase_number"])
		}
	}
	state := tr.add("state", c.Must("get_workflow_state", map[string]any{"session_id": sid}))
	statuses := Dig(state, "phases").([]any)
	if len(statuses) != len(phases) {
		c.TB.Errorf("%s: state lists %d phases, overview %d", workflowType, len(statuses), len(phases))
	}
	done := 0
	for _, p := range statuses {
		if st := Dig(p, "status"); st == "completed" || st == "skipped" {
			done++
		}
	}
	if want := min(2, len(phases)) + len(Dig(start, "skipped_phases").([]any)); done != want {
		c.TB.Errorf("%s: %d phases done, want %d: %v", workflowType, done, want, statuses)
	}
	return tr
}

// checkGateAnswer checks complete_phase's answer against the gate.
func checkGateAnswer(c *Client, workflowType string, n int, gate, res map[string]any, valid bool) {
	c.TB.Helper()
	errs, _ := res["errors"].([]any)
	warns, _ := res["warnings"].([]any)
	required := 0
	for _, f := range gate["evidence_fields"].([]any) {
		if Dig(f, "required") == true {
			required++
		}
	}
	strict := gate["strict"] == true
	switch {
	case valid:
		if res["checkpoint_passed"] != true || len(errs) > 0 || len(warns) > 0 {
			c.TB.Errorf("%s phase %d: valid evidence: passed %v errors %v warnings %v", workflowType, n, res["checkpoint_passed"], errs, warns)
		}
	case required == 0:
		if res["checkpoint_passed"] != true {
			c.TB.Errorf("%s phase %d: a permissive gate refused evidence: %v", workflowType, n, errs)
		}
	case strict:
		if res["checkpoint_passed"] != false || len(errs) < required || res["checkpoint_status"] != "failed" {
			c.TB.Errorf("%s phase %d: strict gate let invalid evidence pass: %v", workflowType, n, res)
		}
	default:
		missing := fmt.Sprint(warns)
		if res["checkpoint_passed"] != true || len(errs) > 0 || len(warns) < required || !strings.Contains(missing, "missing required field") || !strings.Contains(missing, "must be") {
			c.TB.Errorf("%s phase %d: lenient gate on invalid evidence: passed %v errors %v warnings %v", workflowType, n, res["checkpoint_passed"], errs, warns)
		}
	}
}

// WalkSpecExecution runs feature_delivery_v1 on the small spec to the end:
// phase 0 from its files, then the spec's two phases rendered from the
// templates, each refusing evidence that lacks a task or a criterion.
func WalkSpecExecution(c *Client, target string) Transcript {
	c.TB.Helper()
	var tr Transcript
	start := tr.add("start", c.Must("start_workflow", map[string]any{"workflow_type": "feature_delivery_v1", "target_file": target, "options": map[string]any{"spec_path": SpecPath}}))
	sid := start["session_id"].(string)
	var names []string
	for _, p := range Dig(start, "workflow_overview", "phases").([]any) {
		names = append(names, fmt.Sprintf("%d %v", Num(Dig(p, "phase_number")), Dig(p, "phase_name")))
	}
	if want := []string{"0 Read the spec", "1 Storage Layer", "2 HTTP API"}; !slices.Equal(names, want) || Num(start["total_phases"]) != 3 {
		c.TB.Fatalf("overview phases %q (total %v), want %q", names, start["total_phases"], want)
	}
	if Dig(start, "phase", "source") != "file" || Num(Dig(start, "phase", "phase_number")) != 0 {
		c.TB.Fatalf("phase 0 = %v", start["phase"])
	}
	task := tr.add("get_task 0/2", c.Must("get_task", map[string]any{"session_id": sid, "phase": 0, "task_number": 2}))
	if !strings.Contains(task["content"].(string), "tasks.md") {
		c.TB.Errorf("task 0/2 content does not mention tasks.md")
	}
	if out, ok := c.Call("get_task", map[string]any{"session_id": sid, "phase": 1, "task_number": 1}); ok || !strings.Contains(out["error"].(string), "not reached yet") {
		c.TB.Errorf("phase 1 readable before phase 0 is done: %v", out)
	}
	gate0 := Dig(start, "phase", "gate").(map[string]any)
	res := tr.add("complete 0", c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 0, "evidence": Evidence(gate0, true)}))
	p1 := res["next_phase_content"].(map[string]any)
	content := p1["content"].(string)
	if p1["source"] != "template" || !strings.Contains(content, "# Phase 1: Storage Layer") || !strings.Contains(content, "- [ ] Repository tests pass") ||
		!strings.Contains(content, "Store greetings durably") || strings.Contains(content, "[PHASE_NAME]") {
		c.TB.Errorf("phase 1 rendered as %q (source %v)", content, p1["source"])
	}
	if ids := fmt.Sprint(Dig(p1, "tasks", 0, "task_id"), Dig(p1, "tasks", 1, "task_id")); ids != "1.11.2" {
		c.TB.Errorf("phase 1 task ids %s", ids)
	}
	t12 := tr.add("get_task 1/2", c.Must("get_task", map[string]any{"session_id": sid, "phase": 1, "task_number": 2}))
	if tc := t12["content"].(string); !strings.Contains(tc, "# Task 1.2: Add the repository") || !strings.Contains(tc, "- [ ] Errors are wrapped with context") ||
		!strings.Contains(tc, "**Dependencies:** 1.1") || t12["source"] != "template" {
		c.TB.Errorf("task 1.2 rendered as %q", tc)
	}
	bad := tr.add("complete 1 (lacking)", c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": map[string]any{
		"tasks_completed": []any{"1.1"}, "validation_gate": map[string]any{"Migration applied in CI": true, "repository_tests_pass": false}, "tests_passing": 12,
	}}))
	if errs := fmt.Sprint(bad["errors"]); bad["checkpoint_passed"] != false || !strings.Contains(errs, "lacks 1.2") || !strings.Contains(errs, `"Repository tests pass"`) {
		c.TB.Errorf("phase 1 with a task and a criterion missing: %v", bad)
	}
	gate1 := p1["gate"].(map[string]any)
	res = tr.add("complete 1", c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": Evidence(gate1, true)}))
	if res["checkpoint_passed"] != true || Num(res["next_phase"]) != 2 {
		c.TB.Fatalf("phase 1 with valid evidence: %v", res)
	}
	p2 := res["next_phase_content"].(map[string]any)
	t21 := tr.add("get_task 2/1", c.Must("get_task", map[string]any{"session_id": sid, "phase": 2, "task_number": 1}))
	if !strings.Contains(t21["content"].(string), "Task 2.1: Add the GET /greetings handler") || fmt.Sprint(t21["dependencies"]) != "[1.2]" {
		c.TB.Errorf("task 2.1 = %v", t21)
	}
	state := tr.add("state", c.Must("get_workflow_state", map[string]any{"session_id": sid}))
	var st []string
	for _, p := range state["phases"].([]any) {
		st = append(st, fmt.Sprintf("%d %v %v", Num(Dig(p, "phase_number")), Dig(p, "phase_name"), Dig(p, "status")))
	}
	if want := []string{"0 Read the spec completed", "1 Storage Layer completed", "2 HTTP API current"}; !slices.Equal(st, want) {
		c.TB.Errorf("state phases %q, want %q", st, want)
	}
	if Dig(state, "source", "file") != SpecPath+"/tasks.md" || Dig(state, "source", "changed") != false {
		c.TB.Errorf("state source = %v", state["source"])
	}
	res = tr.add("complete 2", c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 2, "evidence": Evidence(p2["gate"].(map[string]any), true)}))
	if res["workflow_complete"] != true || res["checkpoint_passed"] != true {
		c.TB.Fatalf("phase 2: %v", res)
	}
	if out, ok := c.Call("complete_phase", map[string]any{"session_id": sid, "phase": 2, "evidence": map[string]any{}}); ok || !strings.Contains(out["error"].(string), "already completed") {
		c.TB.Errorf("completing phase 2 twice: %v", out)
	}
	return tr
}
