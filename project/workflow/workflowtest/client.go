// Package workflowtest drives the workflow tools through a real MCP client
// session, for the workflow engine's own tests and for end-to-end tests
// against a running broker: it copies workflows written in praxis-os's
// format (testdata/praxis-format) and a small spec into a project, and walks workflows with valid and invalid
// evidence the way an agent would, reading each phase's gate from the
// server's answers.
package workflowtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Workflows names the five workflows of project/workflow/testdata/praxis-format,
// written for Berth's tests to use every feature of praxis-os's format:
//
//   - db_migration_v1: a gate file per phase, strict and lenient, with
//     validators, validator_params and cross_field_validation lambdas
//     (re and yaml.safe_load included), the "file" key, an unknown key;
//   - design_doc_v1: phase 0 skippable ("No reference_docs in options")
//     with a task 0, "phase_file", checkpoint.required_evidence beside gate
//     files that lack some of its names, and a phase gated by metadata alone;
//   - feature_delivery_v1: dynamic phases from a spec's tasks.md after a
//     static phase 0, a "1-N" entry, phase and task templates;
//   - runbook_writing_v1: no gate file at all (permissive gates), a phase
//     whose tasks are found by file name;
//   - workflow_scaffold_v1: a phase folder missing, task files missing and
//     others unlisted, a workflow_type that differs from the folder.
var Workflows = []string{"db_migration_v1", "design_doc_v1", "feature_delivery_v1", "runbook_writing_v1", "workflow_scaffold_v1"}

// Options are the start options each of Workflows needs to start at its
// first phase (design_doc_v1 skips phase 0 without reference_docs).
var Options = map[string]map[string]any{
	"design_doc_v1":       {"reference_docs": []any{"docs/research.md"}},
	"feature_delivery_v1": {"spec_path": SpecPath},
}

// SpecPath is where Project puts the small two-phase spec, relative to the root.
const SpecPath = ".praxis-os/specs/2025-10-07-small-feature"

// testdata is project/workflow/testdata, found from this file's path.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Project fills root with Workflows (under
// .praxis-os/workflows), the small spec (at SpecPath) and one standard.
func Project(tb testing.TB, root string) {
	tb.Helper()
	copies := map[string]string{
		filepath.Join(testdata(), "praxis-format"):                     filepath.Join(root, ".praxis-os", "workflows"),
		filepath.Join(testdata(), "specs", "2025-10-07-small-feature"): filepath.Join(root, filepath.FromSlash(SpecPath)),
	}
	for from, to := range copies {
		if err := os.CopyFS(to, os.DirFS(from)); err != nil {
			tb.Fatal(err)
		}
	}
	std := filepath.Join(root, ".praxis-os", "standards", "workflows", "generating-phase-content.md")
	if err := os.MkdirAll(filepath.Dir(std), 0o755); err != nil {
		tb.Fatal(err)
	}
	body := "# Generating phase content\n\n## Load the target definition\n\n" +
		"Read the target workflow's definition YAML, list its phases and tasks, and generate one phase.md and one task file per task.\n"
	if err := os.WriteFile(std, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Client calls the workflow tools, as the workflow tool group names them or
// through the single pos_workflow tool.
type Client struct {
	TB  testing.TB
	CS  *mcp.ClientSession
	POS bool // call pos_workflow with the matching action
}

// posActions maps tool names to pos_workflow actions.
var posActions = map[string]string{
	"start_workflow": "start", "get_current_phase": "get_phase", "get_task": "get_task",
	"complete_phase": "complete_phase", "get_workflow_state": "get_state", "list_workflows": "list_workflows",
}

// Call calls tool with args; ok is false for a tool error, whose text is then
// in out["error"].
func (c *Client) Call(tool string, args map[string]any) (out map[string]any, ok bool) {
	c.TB.Helper()
	name := tool
	if c.POS {
		a := map[string]any{"action": posActions[tool]}
		for k, v := range args {
			a[k] = v
		}
		name, args = "pos_workflow", a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CS.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.TB.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return map[string]any{"error": b.String()}, false
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.TB.Fatal(err)
	}
	out = map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		c.TB.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	if c.POS {
		if out["status"] != "success" || out["action"] != posActions[tool] {
			c.TB.Fatalf("pos_workflow %s: status %v action %v", posActions[tool], out["status"], out["action"])
		}
		delete(out, "status")
		delete(out, "action")
		if st, ok := out["session_status"]; ok {
			out["status"] = st
			delete(out, "session_status")
		}
	}
	return out, true
}

// Must is Call that fails the test on a tool error.
func (c *Client) Must(tool string, args map[string]any) map[string]any {
	c.TB.Helper()
	out, ok := c.Call(tool, args)
	if !ok {
		c.TB.Fatalf("%s %v: %v", tool, args, out["error"])
	}
	return out
}

// Dig walks nested maps and lists by keys (strings) and indexes (ints).
func Dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// Num reads a JSON number as an int (-1 when it is not one).
func Num(v any) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return -1
}
