package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exampleWorkflows adds the built-in example workflow to the demo project.
func exampleWorkflows(root string) error {
	return os.CopyFS(filepath.Join(root, api.ProjectDir, "workflows"), workflow.ExampleWorkflows())
}

func demoSearchAndWorkflow(ctx context.Context, d *demo, ide, agent *mcp.ClientSession) error {
	d.say(`The IDE searches the project's standards: "closing files"`)
	res, err := d.callJSON(ctx, ide, "search_standards", map[string]any{"query": "closing files", "n_results": 3})
	if err != nil {
		return err
	}
	printHits(d, res)

	d.say("A new standard is written; the watcher indexes it and the sub-agent finds it")
	doc := filepath.Join(d.root, api.ProjectDir, "standards", "development", "logging.md")
	if err := os.WriteFile(doc, []byte("# Logging\n\n## Structured logs\n\nUse log/slog with key-value pairs; never print to the shim's stdout.\n"), 0o644); err != nil {
		return err
	}
	written := time.Now()
	var found map[string]any
	for i := 0; i < 100 && found == nil; i++ { // at most ~5 s
		r, err := d.callJSON(ctx, agent, "search_standards", map[string]any{"query": "structured slog logs", "n_results": 1})
		if err != nil {
			return err
		}
		if hits, _ := r["results"].([]any); len(hits) > 0 && strings.HasSuffix(fmt.Sprint(hits[0].(map[string]any)["file"]), "logging.md") {
			found = r
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if found == nil {
		return fmt.Errorf("the new standard was not searchable within 5s")
	}
	d.detail("searchable %.0f ms after the write", float64(time.Since(written).Microseconds())/1000)
	printHits(d, found)

	d.say("The IDE starts the bug_fix_v1 workflow and reads its first task")
	start, err := d.callJSON(ctx, ide, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/parser.go"})
	if err != nil {
		return err
	}
	sid := fmt.Sprint(start["session_id"])
	d.detail("session %s, phase %v of %v: %v", sid, start["current_phase"], start["total_phases"], dig(start, "phase", "phase_name"))
	task, err := d.callJSON(ctx, ide, "get_task", map[string]any{"session_id": sid, "phase": 1, "task_number": 1})
	if err != nil {
		return err
	}
	d.detail("task 1.1: %v (%v)", task["name"], task["file"])

	d.say("The sub-agent completes phase 1 with evidence over HTTP")
	done, err := d.callJSON(ctx, agent, "complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": map[string]any{
		"reproduced": true, "failing_test": "src/parser_test.go", "root_cause": "the tokenizer drops the last byte of a quoted string",
	}})
	if err != nil {
		return err
	}
	d.detail("checkpoint_passed %v, next phase %v, warnings %v", done["checkpoint_passed"], done["next_phase"], done["warnings"])

	d.say("Phase 2's strict gate refuses failing tests")
	bad, err := d.callJSON(ctx, agent, "complete_phase", map[string]any{"session_id": sid, "phase": 2, "evidence": map[string]any{
		"tests_passed": 41, "tests_failed": 2, "files_changed": []string{"src/parser.go"}, "fix_summary": "keep the closing quote",
	}})
	if err != nil {
		return err
	}
	d.detail("checkpoint_passed %v, errors %v", bad["checkpoint_passed"], bad["errors"])

	d.say("The IDE sees the sub-agent's progress in the shared session")
	state, err := d.callJSON(ctx, ide, "get_workflow_state", map[string]any{"session_id": sid})
	if err != nil {
		return err
	}
	d.detail("current phase %v (%v), completed %v, checkpoints %v", state["current_phase"], state["phase_name"], state["completed_phases"], state["checkpoints"])
	return nil
}

func printHits(d *demo, res map[string]any) {
	hits, _ := res["results"].([]any)
	d.detail("%v result(s) in %v ms", res["total"], res["query_time_ms"])
	for _, h := range hits {
		m, _ := h.(map[string]any)
		d.detail("  %.2f  %v  %v  lines %v", m["relevance_score"], m["file"], m["section"], m["lines"])
	}
}
