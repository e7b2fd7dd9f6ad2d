package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var standards = map[string]string{
	".praxis-os/standards/errors.md":      "# Errors\n\n## Wrapping\n\nWrap every error with context.\n\n## Closing files\n\nClose what you open with defer.\n",
	".praxis-os/standards/concurrency.md": "# Concurrency\n\n## Owners\n\nEach resource has one owner goroutine.\n",
	".praxis-os/usage/tools.md":           "# Tools\n\nUse search_standards before coding.\n",
}

type searchHit struct {
	File    string `json:"file"`
	Section string `json:"section"`
}

func search(t *testing.T, ctx context.Context, s *mcp.ClientSession, q string) []searchHit {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": q, "n_results": 10}})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	if res.IsError {
		t.Fatalf("search %q: %s", q, brokertest.ResultText(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct{ Results []searchHit }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out.Results
}

func files(hits []searchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.File)
	}
	return out
}

func hasFile(hits []searchHit, file string) bool {
	for _, h := range hits {
		if h.File == file {
			return true
		}
	}
	return false
}

type indexStatus struct {
	State     string `json:"state"`
	Files     int    `json:"files"`
	Chunks    int    `json:"chunks"`
	FilesRead int    `json:"files_read"`
}

func projectIndex(t *testing.T, ctx context.Context, b *brokertest.Broker, id string) indexStatus {
	t.Helper()
	p, err := b.Client.Project(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p.Detail["index"])
	var st indexStatus
	json.Unmarshal(raw, &st)
	return st
}

func TestSearchFollowsEditsAndReopensWithoutReindexing(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "searchy", standards)
	att := b.Attach(t, root)
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: att.URL})

	if hits := search(t, ctx, s, "closing files"); len(hits) == 0 || hits[0].File != ".praxis-os/standards/errors.md" || hits[0].Section != "Errors > Closing files" {
		t.Fatalf("closing files -> %+v", hits)
	}
	st := projectIndex(t, ctx, b, att.ID)
	if st.State != "ready" || st.Files != 3 {
		t.Fatalf("index status %+v", st)
	}

	std := filepath.Join(root, ".praxis-os", "standards")
	// Create.
	os.WriteFile(filepath.Join(std, "zebra.md"), []byte("# Zebras\n\nStripes are mandatory.\n"), 0o644)
	brokertest.Eventually(t, "new file searchable", func() bool { return hasFile(search(t, ctx, s, "stripes"), ".praxis-os/standards/zebra.md") })
	// Edit.
	os.WriteFile(filepath.Join(std, "zebra.md"), []byte("# Zebras\n\nSpots are mandatory.\n"), 0o644)
	brokertest.Eventually(t, "edit applied", func() bool {
		return len(search(t, ctx, s, "stripes")) == 0 && hasFile(search(t, ctx, s, "spots"), ".praxis-os/standards/zebra.md")
	})
	// Rename: the old path disappears, the new one appears.
	os.Rename(filepath.Join(std, "zebra.md"), filepath.Join(std, "okapi.md"))
	brokertest.Eventually(t, "rename applied", func() bool {
		hits := search(t, ctx, s, "spots")
		return hasFile(hits, ".praxis-os/standards/okapi.md") && !hasFile(hits, ".praxis-os/standards/zebra.md")
	})
	// A new folder.
	os.MkdirAll(filepath.Join(std, "deep", "er"), 0o755)
	os.WriteFile(filepath.Join(std, "deep", "er", "nested.md"), []byte("# Nested\n\nQuokka rules.\n"), 0o644)
	brokertest.Eventually(t, "file in a new folder searchable", func() bool { return len(search(t, ctx, s, "quokka")) == 1 })
	// Delete.
	os.Remove(filepath.Join(std, "okapi.md"))
	brokertest.Eventually(t, "delete applied", func() bool { return len(search(t, ctx, s, "spots")) == 0 })

	// Restart the broker: nothing changed, so nothing is read again.
	s.Close()
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home})
	att2 := b2.Attach(t, root)
	brokertest.Eventually(t, "index ready after restart", func() bool { return projectIndex(t, ctx, b2, att2.ID).State == "ready" })
	st2 := projectIndex(t, ctx, b2, att2.ID)
	if st2.FilesRead != 0 || st2.Files != 4 {
		t.Fatalf("after restart: %+v (want 4 files, 0 read)", st2)
	}
	s2 := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: att2.URL})
	if hits := search(t, ctx, s2, "quokka"); len(hits) != 1 {
		t.Fatalf("after restart quokka -> %v", files(hits))
	}
}

func TestSearchIsolatedBetweenProjects(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	a := b.Attach(t, brokertest.Project(t, "isoA", map[string]string{".praxis-os/standards/a.md": "# Alpha\n\nPelican policy.\n"}))
	bb := b.Attach(t, brokertest.Project(t, "isoB", map[string]string{".praxis-os/standards/b.md": "# Beta\n\nFlamingo policy.\n"}))
	sa := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: a.URL})
	sb := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: bb.URL})
	if hits := search(t, ctx, sa, "flamingo"); len(hits) != 0 {
		t.Fatalf("project A returned B's files: %v", files(hits))
	}
	if hits := search(t, ctx, sb, "pelican"); len(hits) != 0 {
		t.Fatalf("project B returned A's files: %v", files(hits))
	}
	if hits := search(t, ctx, sa, "policy"); len(hits) != 1 || hits[0].File != ".praxis-os/standards/a.md" {
		t.Fatalf("A policy -> %v", files(hits))
	}
}

func TestSearchCLI(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "cli", standards)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(brokertest.Berth(t), args...)
		cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("search", "--project", root, "closing", "files")
	if err != nil || !strings.Contains(out, ".praxis-os/standards/errors.md") || !strings.Contains(out, "Errors > Closing files") {
		t.Fatalf("berth search: %v\n%s", err, out)
	}
	// --explain names the words each result matched; --also sends another
	// phrasing, fused with the first.
	out, err = run("search", "--project", root, "--explain", "closing", "--also", "files closed")
	if err != nil || !strings.Contains(out, "matched: closing") || !strings.Contains(out, "ranked by bm25f") {
		t.Fatalf("berth search --explain: %v\n%s", err, out)
	}
	out, err = run("search", "--project", root, "-n", "99", "x")
	if err == nil || !strings.Contains(out, "n_results") {
		t.Fatalf("n_results 99: %v\n%s", err, out)
	}
	// A folder in no project is served as the shim serves it: nothing to
	// search, and the answer says how to start.
	out, err = run("search", "--project", t.TempDir(), "x")
	if err != nil || !strings.Contains(out, "no standards to search") || !strings.Contains(out, ".praxis-os") {
		t.Fatalf("search outside a project: %v\n%s", err, out)
	}
}

func writeWorkflows(t *testing.T, root string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(root, ".praxis-os", "workflows"), workflow.ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
}

func callOK(t *testing.T, ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", tool, brokertest.ResultText(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return out
}

var phase1Evidence = map[string]any{"reproduced": true, "failing_test": "parser_test.go", "root_cause": "the tokenizer drops the last byte"}
var phase2Evidence = map[string]any{"tests_passed": 10, "tests_failed": 0, "files_changed": []string{"parser.go"}, "fix_summary": "keep the last byte"}

func TestWorkflowSharedBetweenIDEAndSubAgent(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "flow", nil)
	writeWorkflows(t, root)
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	start := callOK(t, ctx, ide, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/parser.go"})
	sid := start["session_id"].(string)

	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL})
	done := callOK(t, ctx, agent, "complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": phase1Evidence})
	if done["checkpoint_passed"] != true || done["next_phase"] != float64(2) {
		t.Fatalf("complete phase 1: %v", done)
	}
	cur := callOK(t, ctx, ide, "get_current_phase", map[string]any{"session_id": sid})
	if fmt.Sprint(cur["current_phase"]) != "2" && fmt.Sprint(dig(cur, "phase", "phase_number")) != "2" {
		t.Fatalf("IDE does not see the advance: %v", cur)
	}
	// Starting the same workflow on the same target resumes the session.
	again := callOK(t, ctx, ide, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/parser.go"})
	if again["session_id"] != sid || again["resumed"] != true {
		t.Fatalf("restart of the same workflow: %v", again)
	}

	// The IDE and the sub-agent complete phase 2 at once: exactly one wins.
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 2)
	for i, s := range []*mcp.ClientSession{ide, agent} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "complete_phase", Arguments: map[string]any{"session_id": sid, "phase": 2, "evidence": phase2Evidence}})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	wins, already := 0, 0
	for _, r := range results {
		if !r.IsError {
			raw, _ := json.Marshal(r.StructuredContent)
			if strings.Contains(string(raw), `"checkpoint_passed":true`) {
				wins++
			}
			continue
		}
		if strings.Contains(brokertest.ResultText(r), "phase 2 already completed") {
			already++
		}
	}
	if wins != 1 || already != 1 {
		t.Fatalf("concurrent completion: %d winners, %d 'already completed' (results %+v)", wins, already, results)
	}
	state := callOK(t, ctx, agent, "get_workflow_state", map[string]any{"session_id": sid})
	if fmt.Sprint(state["current_phase"]) != "3" || fmt.Sprint(state["completed_phases"]) != "[1 2]" {
		t.Fatalf("state after phase 2: %v", state)
	}
}

func TestWorkflowSessionsSurviveKill9AndStayIsolated(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	ctx := testCtx(t, 60*time.Second)
	rootA := brokertest.Project(t, "wfA", nil)
	rootB := brokertest.Project(t, "wfB", nil)
	writeWorkflows(t, rootA)
	writeWorkflows(t, rootB)
	a := b.Attach(t, rootA)
	sa := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: a.URL})
	sid := callOK(t, ctx, sa, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "x.go"})["session_id"].(string)
	callOK(t, ctx, sa, "complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": phase1Evidence})
	bad, err := sa.CallTool(ctx, &mcp.CallToolParams{Name: "complete_phase", Arguments: map[string]any{"session_id": sid, "phase": 2, "evidence": map[string]any{"tests_passed": 3, "tests_failed": 1, "files_changed": []string{"x.go"}, "fix_summary": "partial fix here"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(bad.StructuredContent)
	if !strings.Contains(string(raw), `"checkpoint_passed":false`) {
		t.Fatalf("strict gate passed failing evidence: %s %s", raw, brokertest.ResultText(bad))
	}

	b.Kill(t) // kill -9 mid-workflow
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home})
	a2 := b2.Attach(t, rootA)
	sa2 := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: a2.URL})
	state := callOK(t, ctx, sa2, "get_workflow_state", map[string]any{"session_id": sid})
	if fmt.Sprint(state["current_phase"]) != "2" || fmt.Sprint(state["completed_phases"]) != "[1]" || fmt.Sprint(dig(state, "checkpoints", "2")) != "failed" {
		t.Fatalf("session after kill -9: %v", state)
	}
	if ev := dig(state, "phase_artifacts", "2", "evidence", "tests_failed"); fmt.Sprint(ev) != "1" {
		t.Errorf("failed evidence not stored: %v", dig(state, "phase_artifacts"))
	}

	// Project B does not know A's session.
	bProj := b2.Attach(t, rootB)
	sb := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: bProj.URL})
	res, err := sb.CallTool(ctx, &mcp.CallToolParams{Name: "get_workflow_state", Arguments: map[string]any{"session_id": sid}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(brokertest.ResultText(res), "not found") {
		t.Fatalf("project B answered for A's session: %s", brokertest.ResultText(res))
	}
}

func TestWorkflowsAndSessionsCLI(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "wfcli", map[string]string{
		".praxis-os/workflows/broken_v1/metadata.json": `{"workflow_type": "broken_v1", "phases": [`,
	})
	writeWorkflows(t, root)
	out, code := berthCmd(t, b.Home, "workflows", "--project", root)
	if code != 0 || !strings.Contains(out, "bug_fix_v1") || !strings.Contains(out, "broken_v1") || !strings.Contains(out, "error:") {
		t.Fatalf("berth workflows: %d\n%s", code, out)
	}
	if out, code := berthCmd(t, b.Home, "sessions", "--project", root); code != 0 || !strings.Contains(out, "no workflow sessions") {
		t.Fatalf("berth sessions (none): %d\n%s", code, out)
	}
	if out, code := berthCmd(t, b.Home, "call", "--project", root, "start_workflow", `{"workflow_type":"bug_fix_v1","target_file":"a.go"}`); code != 0 {
		t.Fatalf("start: %d\n%s", code, out)
	}
	out, code = berthCmd(t, b.Home, "sessions", "--project", root)
	if code != 0 || !strings.Contains(out, "bug_fix_v1") || !strings.Contains(out, "0/3") || !strings.Contains(out, "a.go") {
		t.Fatalf("berth sessions: %d\n%s", code, out)
	}
	out, code = berthCmd(t, b.Home, "call", "--project", root, "start_workflow", `{"workflow_type":"bug_fix_v1","target_file":"../escape.go"}`)
	if code != 1 || !strings.Contains(out, "remediation") {
		t.Fatalf("escaping target: %d\n%s", code, out)
	}
}

func TestPraxisSessionsImportedOnFirstMount(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 30*time.Second)
	root := brokertest.Project(t, "legacy", nil)
	writeWorkflows(t, root)
	stateDir := filepath.Join(root, ".praxis-os", ".cache", "state")
	if err := os.CopyFS(stateDir, os.DirFS("../../../project/workflow/testdata/praxis-state")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(stateDir)
	resp := b.Attach(t, root)
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL})
	list := callOK(t, ctx, s, "list_workflow_sessions", map[string]any{})
	if n, _ := list["count"].(float64); n < 2 {
		t.Fatalf("imported sessions: %v", list)
	}
	// The skipped file is named in the broker's log; the praxis-os files are untouched.
	brokertest.Eventually(t, "corrupt file named in the log", func() bool { return strings.Contains(b.Stderr(), "corrupt-session.json") })
	after, _ := os.ReadDir(stateDir)
	if len(after) != len(before) {
		t.Fatalf("state dir changed: %d -> %d files", len(before), len(after))
	}
}
