package systest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionRows are list_workflow_sessions' rows by session id.
func sessionRows(t *testing.T, list map[string]any) map[string]map[string]any {
	t.Helper()
	rows := map[string]map[string]any{}
	items, _ := list["sessions"].([]any)
	for _, it := range items {
		row, _ := it.(map[string]any)
		id, _ := row["session_id"].(string)
		rows[id] = row
	}
	return rows
}

// TestWorktreeSessionsSeenAcrossWorktrees: agents in three git worktrees
// of one repository (git worktree add) each run a workflow. Each session
// records its worktree and branch; list_workflow_sessions with scope
// repository, from any worktree, lists the siblings' sessions with their
// project, branch, phase and last checkpoint (the unmounted sibling's too)
// and never those of a checkout whose .git only claims to be a worktree;
// the default scope stays the project's. A sibling's session is read-only:
// get_workflow_state reads it, complete_phase and delete_workflow_session
// refuse, naming the worktree to use. A git checkout of another branch in
// a worktree shows in get_workflow_state. The sessions are resources a
// client lists, reads and subscribes to: completing a phase sends
// notifications/resources/updated for it.
func TestWorktreeSessionsSeenAcrossWorktrees(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	root := brokertest.Project(t, "repo", nil)
	writeWorkflows(t, root)
	brokertest.Git(t, root, "init", "-q", "-b", "main")
	brokertest.Git(t, root, "add", "-A")
	brokertest.Git(t, root, "commit", "-q", "-m", "first")
	one, two, three := brokertest.Worktree(t, root, "one"), brokertest.Worktree(t, root, "two"), brokertest.Worktree(t, root, "three")
	// A checkout whose .git names one's admin folder: a claim git never
	// confirms (that folder's gitdir points to one).
	impostor := brokertest.Project(t, "impostor", nil)
	writeWorkflows(t, impostor)
	if err := os.WriteFile(filepath.Join(impostor, ".git"), []byte("gitdir: "+filepath.Join(root, ".git", "worktrees", "one")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	b := brokertest.StartBroker(t, brokertest.Options{})
	start := func(s *mcp.ClientSession, target string) string {
		return callOK(t, ctx, s, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": target})["session_id"].(string)
	}

	// three: a session, then the worktree is detached and unmounted.
	threeAt := b.Attach(t, three)
	sThree := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: threeAt.URL})
	sidThree := start(sThree, "c.go")
	sThree.Close()
	if err := b.Client.Detach(ctx, threeAt.Project.ID, ""); err != nil {
		t.Fatalf("detach %s: %v", three, err)
	}
	brokertest.Eventually(t, "the worktree three is unmounted", func() bool {
		ps, err := b.Client.Projects(ctx)
		return err == nil && !slices.ContainsFunc(ps, func(p api.Project) bool { return p.ID == threeAt.Project.ID })
	})

	impAt := b.Attach(t, impostor)
	sImp := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: impAt.URL})
	sidImp := start(sImp, "x.go")

	oneAt, twoAt := b.Attach(t, one), b.Attach(t, two)
	sOne, updates := updatedClient(t, ctx, &mcp.StreamableClientTransport{Endpoint: oneAt.URL}, "")
	sTwo := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: twoAt.URL})
	sidOne := start(sOne, "a.go")
	callOK(t, ctx, sOne, "complete_phase", map[string]any{"session_id": sidOne, "phase": 1, "evidence": phase1Evidence})
	sidTwo := start(sTwo, "b.go")

	// The default scope is the project's.
	if rows := sessionRows(t, callOK(t, ctx, sTwo, "list_workflow_sessions", map[string]any{})); len(rows) != 1 || rows[sidTwo] == nil {
		t.Fatalf("two's sessions (default scope): %v, want its own only", rows)
	}
	list := callOK(t, ctx, sTwo, "list_workflow_sessions", map[string]any{"scope": "repository"})
	rows := sessionRows(t, list)
	if len(rows) != 3 || rows[sidImp] != nil {
		t.Fatalf("two's sessions of the repository: %v, want one's, two's and three's (not the impostor's %s)", rows, sidImp)
	}
	want := map[string]struct {
		project, worktree, branch string
		readOnly, mounted         bool
		phase                     float64
	}{
		sidOne:   {oneAt.Project.ID, one, "one", true, true, 2},
		sidTwo:   {twoAt.Project.ID, two, "two", false, true, 1},
		sidThree: {threeAt.Project.ID, three, "three", true, false, 1},
	}
	for sid, w := range want {
		r := rows[sid]
		if r["project"] != w.project || r["worktree"] != w.worktree || r["branch"] != w.branch ||
			(r["read_only"] == true) != w.readOnly || r["mounted"] != w.mounted || r["current_phase"] != w.phase {
			t.Errorf("row of %s: %v, want project %s, worktree %s, branch %s, read_only %v, mounted %v, phase %v",
				sid, r, w.project, w.worktree, w.branch, w.readOnly, w.mounted, w.phase)
		}
	}
	if lc, _ := rows[sidOne]["last_checkpoint"].(map[string]any); lc["phase"] != float64(1) || lc["status"] != "passed" || lc["at"] == "" {
		t.Errorf("one's last checkpoint: %v, want phase 1 passed", rows[sidOne]["last_checkpoint"])
	}
	if !strings.HasPrefix(fmt.Sprint(rows[sidOne]["progress"]), "1/") {
		t.Errorf("one's progress: %v", rows[sidOne]["progress"])
	}

	// An unmounted sibling's session: the refusal says how to serve it.
	res, err := sTwo.CallTool(ctx, &mcp.CallToolParams{Name: "complete_phase", Arguments: map[string]any{"session_id": sidThree, "phase": 1, "evidence": phase1Evidence}})
	if err != nil {
		t.Fatal(err)
	}
	if text := brokertest.ResultText(res); !res.IsError || !strings.Contains(text, "sibling worktree "+three) || !strings.Contains(text, "berth attach "+three) {
		t.Errorf("complete_phase of the unmounted three's session from two: error %v, %q", res.IsError, text)
	}

	// An unmounted sibling is confirmed again from its files: once its .git
	// names another worktree's admin folder, its sessions are not listed.
	if err := os.WriteFile(filepath.Join(three, ".git"), []byte("gitdir: "+filepath.Join(root, ".git", "worktrees", "two")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows := sessionRows(t, callOK(t, ctx, sOne, "list_workflow_sessions", map[string]any{"scope": "repository"})); len(rows) != 2 || rows[sidThree] != nil {
		t.Errorf("one's sessions of the repository once three's .git names another worktree: %v, want one's and two's", rows)
	}

	// Read-only from another worktree.
	state := callOK(t, ctx, sTwo, "get_workflow_state", map[string]any{"session_id": sidOne})
	if state["read_only"] != true || state["project"] != oneAt.Project.ID || state["current_phase"] != float64(2) {
		t.Errorf("one's session read from two: %v", state)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"complete_phase", map[string]any{"session_id": sidOne, "phase": 2, "evidence": phase2Evidence}},
		{"delete_workflow_session", map[string]any{"session_id": sidOne}},
	} {
		res, err := sTwo.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		where := one
		if text := brokertest.ResultText(res); !res.IsError || !strings.Contains(text, "read-only from this worktree") || !strings.Contains(text, "sibling worktree "+where) {
			t.Errorf("%s of a sibling's session from two: error %v, %q; want a refusal naming %s", call.tool, res.IsError, text, where)
		}
	}
	if st := callOK(t, ctx, sOne, "get_workflow_state", map[string]any{"session_id": sidOne}); st["current_phase"] != float64(2) {
		t.Fatalf("one's session after two's refused writes: %v", st)
	}

	// The sessions as resources: listed, read, subscribed to.
	uri := "berth://workflow/sessions/" + sidOne
	brokertest.Eventually(t, "one's resources list its session", func() bool {
		listed := false
		for r, err := range sOne.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			listed = listed || r.URI == uri
			if r.URI == "berth://workflow/sessions/"+sidTwo {
				t.Fatalf("one lists two's session %s as its resource", sidTwo)
			}
		}
		return listed
	})
	read := func() map[string]any {
		t.Helper()
		res, err := sOne.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("read %s: %v %v", uri, err, res)
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &st); err != nil {
			t.Fatalf("%s is not JSON: %v", uri, err)
		}
		return st
	}
	if st := read(); st["session_id"] != sidOne || st["current_phase"] != float64(2) || st["branch"] != "one" || st["worktree"] != one {
		t.Errorf("%s reads %v", uri, st)
	}
	if err := sOne.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: oneAt.URL})
	callOK(t, ctx, agent, "complete_phase", map[string]any{"session_id": sidOne, "phase": 2, "evidence": phase2Evidence})
	updatedFor(t, updates, "one's subscribed client", uri)
	if st := read(); st["current_phase"] != float64(3) {
		t.Errorf("%s after phase 2: current_phase %v, want 3", uri, st["current_phase"])
	}

	// The worktree moves to another branch.
	brokertest.Git(t, one, "checkout", "-q", "-b", "elsewhere")
	brokertest.Eventually(t, "get_workflow_state says one's worktree moved to another branch", func() bool {
		st := callOK(t, ctx, sOne, "get_workflow_state", map[string]any{"session_id": sidOne})
		co, _ := st["checkout"].(map[string]any)
		return co["moved_to_another_branch"] == true && co["branch"] == "one" && co["branch_now"] == "elsewhere" &&
			strings.Contains(fmt.Sprint(st["warnings"]), "from branch one, where this session started, to branch elsewhere")
	})
	if st := callOK(t, ctx, sTwo, "get_workflow_state", map[string]any{"session_id": sidTwo}); dig(st, "checkout", "moved_to_another_branch") != false {
		t.Errorf("two's session, whose worktree stayed on its branch: checkout %v", st["checkout"])
	}
}
