package workflow

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves e's tools on an in-memory transport and returns a client session.
func connect(t *testing.T, e *Engine, workflowGroup, posGroup bool) (*mcp.ClientSession, []string) {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "berth-test", Version: "v0"}, nil)
	names := AddTools(srv, e, workflowGroup, posGroup)
	AddCurrentDate(srv)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, names
}

// call calls a tool and decodes its structured result into out (when not nil).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if out != nil && !res.IsError {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, raw, err)
		}
	}
	return res
}

// wantToolError checks that a call failed as a tool result with a remediation line.
func wantToolError(t *testing.T, res *mcp.CallToolResult, contains string) {
	t.Helper()
	msg := brokertest.ResultText(res)
	if !res.IsError || !strings.Contains(msg, contains) || !strings.Contains(msg, "\nremediation: ") {
		t.Fatalf("result (error %v) %q, want a tool error containing %q and a remediation line", res.IsError, msg, contains)
	}
}

func TestToolsRegistrationAndSchemas(t *testing.T) {
	e, _ := setup(t)
	cs, names := connect(t, e, true, true)
	want := []string{ToolListWorkflows, ToolStartWorkflow, ToolGetCurrentPhase, ToolGetTask, ToolCompletePhase,
		ToolGetWorkflowState, ToolListWorkflowSessions, ToolDeleteWorkflowSession, ToolPOSWorkflow}
	if !slices.Equal(names, want) {
		t.Fatalf("AddTools returned %q", names)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, n := range append(want, ToolCurrentDate) {
		if tools[n] == nil || tools[n].Description == "" {
			t.Errorf("tool %s missing or undocumented", n)
		}
	}
	schema, _ := json.Marshal(tools[ToolCompletePhase].InputSchema)
	var s struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	slices.Sort(s.Required)
	if !slices.Equal(s.Required, []string{"evidence", "phase", "session_id"}) || s.Properties["phase"]["type"] != "integer" {
		t.Errorf("complete_phase input schema = %s", schema)
	}
	if tools[ToolCompletePhase].OutputSchema == nil {
		t.Error("complete_phase has no output schema")
	}

	none := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "v0"}, nil)
	if got := AddTools(none, e, false, false); len(got) != 0 {
		t.Errorf("no groups added %q", got)
	}
	if got := AddTools(none, e, false, true); !slices.Equal(got, []string{ToolPOSWorkflow}) {
		t.Errorf("pos group added %q", got)
	}
}

func TestToolsWalkthrough(t *testing.T) {
	e, _ := setup(t)
	ide, _ := connect(t, e, true, false)
	agent, _ := connect(t, e, true, false) // a second client of the same project

	var wl WorkflowList
	call(t, ide, ToolListWorkflows, nil, &wl)
	if wl.Count != 1 || wl.Workflows[0].WorkflowType != "bug_fix_v1" || len(wl.Workflows[0].Phases) != 3 || !wl.Workflows[0].Phases[1].Strict {
		t.Fatalf("list_workflows = %+v", wl)
	}

	var st StartResult
	call(t, ide, ToolStartWorkflow, map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/parser.go"}, &st)
	if st.SessionID == "" || st.Phase == nil || st.Phase.PhaseNumber != 1 {
		t.Fatalf("start_workflow = %+v", st)
	}
	var resumed StartResult
	call(t, agent, ToolStartWorkflow, map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/parser.go"}, &resumed)
	if !resumed.Resumed || resumed.SessionID != st.SessionID {
		t.Fatalf("the sub-agent did not share the session: %+v", resumed)
	}

	var task TaskResult
	call(t, agent, ToolGetTask, map[string]any{"session_id": st.SessionID, "phase": 1, "task_number": 1}, &task)
	if !strings.Contains(task.Content, "Write a failing test") {
		t.Fatalf("get_task = %+v", task)
	}
	wantToolError(t, call(t, agent, ToolGetTask, map[string]any{"session_id": st.SessionID, "phase": 2, "task_number": 1}, nil), "not reached yet")

	// The sub-agent completes phase 1; the IDE sees the advance.
	var done CompleteResult
	call(t, agent, ToolCompletePhase, map[string]any{"session_id": st.SessionID, "phase": 1, "evidence": phase1OK}, &done)
	if !done.CheckpointPassed || done.NextPhase == nil || *done.NextPhase != 2 || done.NextPhaseContent == nil || done.Errors == nil || done.Warnings == nil {
		t.Fatalf("complete_phase = %+v", done)
	}
	var cur PhaseResult
	call(t, ide, ToolGetCurrentPhase, map[string]any{"session_id": st.SessionID}, &cur)
	if cur.CurrentPhase != 2 || cur.Phase == nil || !cur.Phase.Gate.Strict {
		t.Fatalf("get_current_phase after the sub-agent's completion = %+v", cur)
	}
	wantToolError(t, call(t, ide, ToolCompletePhase, map[string]any{"session_id": st.SessionID, "phase": 1, "evidence": phase1OK}, nil), "phase 1 already completed")

	// A strict failure is a normal result, not a tool error.
	var fail CompleteResult
	res := call(t, ide, ToolCompletePhase, map[string]any{"session_id": st.SessionID, "phase": 2, "evidence": map[string]any{"tests_passed": 3}}, &fail)
	if res.IsError || fail.CheckpointPassed || len(fail.FieldsMissing) != 3 || fail.NextPhase != nil {
		t.Fatalf("strict failure = %+v", fail)
	}

	var state StateResult
	call(t, ide, ToolGetWorkflowState, map[string]any{"session_id": st.SessionID}, &state)
	if state.CurrentPhase != 2 || state.Checkpoints["2"] != CheckpointFailed || state.Progress != "1/3" || state.PhaseName != "Fix" {
		t.Fatalf("get_workflow_state = %+v", state)
	}

	var sl SessionList
	call(t, agent, ToolListWorkflowSessions, map[string]any{"status": "active"}, &sl)
	if sl.Count != 1 || sl.Sessions[0].SessionID != st.SessionID || sl.Sessions[0].Progress != "1/3" {
		t.Fatalf("list_workflow_sessions = %+v", sl)
	}
	var del DeleteResult
	call(t, ide, ToolDeleteWorkflowSession, map[string]any{"session_id": st.SessionID}, &del)
	if !del.Deleted {
		t.Fatalf("delete = %+v", del)
	}
	wantToolError(t, call(t, agent, ToolGetWorkflowState, map[string]any{"session_id": st.SessionID}, nil), "not found")
}

func TestToolErrors(t *testing.T) {
	e, _ := setup(t)
	cs, _ := connect(t, e, true, false)
	wantToolError(t, call(t, cs, ToolStartWorkflow, map[string]any{"workflow_type": "bug_fix_v1", "target_file": "../outside"}, nil), "must not contain ..")
	wantToolError(t, call(t, cs, ToolStartWorkflow, map[string]any{"workflow_type": "bug_fix_v1", "target_file": "/etc/passwd"}, nil), "relative")
	wantToolError(t, call(t, cs, ToolStartWorkflow, map[string]any{"workflow_type": "nope", "target_file": "a"}, nil), "not defined")
	wantToolError(t, call(t, cs, ToolGetCurrentPhase, map[string]any{"session_id": "00000000-0000-4000-8000-000000000000"}, nil), "not found")
	wantToolError(t, call(t, cs, ToolListWorkflowSessions, map[string]any{"status": "paused"}, nil), "unknown status")
	var st StartResult
	call(t, cs, ToolStartWorkflow, map[string]any{"workflow_type": "bug_fix_v1", "target_file": "a"}, &st)
	big := map[string]any{"log": strings.Repeat("y", MaxEvidenceBytes+1)}
	wantToolError(t, call(t, cs, ToolCompletePhase, map[string]any{"session_id": st.SessionID, "phase": 1, "evidence": big}, nil), "limit is 1 MiB")
	// Schema validation: a missing required argument is a tool error too.
	if res := call(t, cs, ToolCompletePhase, map[string]any{"session_id": st.SessionID, "phase": 1}, nil); !res.IsError {
		t.Fatal("missing evidence accepted")
	}
}

func TestPOSWorkflowTool(t *testing.T) {
	e, _ := setup(t)
	cs, _ := connect(t, e, false, true)
	pos := func(args map[string]any) map[string]any {
		t.Helper()
		var out map[string]any
		res := call(t, cs, ToolPOSWorkflow, args, &out)
		if res.IsError {
			t.Fatalf("pos_workflow %v: %s", args, brokertest.ResultText(res))
		}
		if out["status"] != "success" || out["action"] != args["action"] {
			t.Fatalf("pos_workflow %v = %v", args["action"], out)
		}
		return out
	}
	if out := pos(map[string]any{"action": "list_workflows"}); out["count"] != 1.0 {
		t.Fatalf("list_workflows = %v", out)
	}
	// Unknown parameters from praxis-os docs are accepted and ignored.
	start := pos(map[string]any{"action": "start", "workflow_type": "bug_fix_v1", "target_file": "feature-x", "options": map[string]any{"spec_path": "specs/x"}, "dynamic": false})
	id, _ := start["session_id"].(string)
	if id == "" {
		t.Fatalf("start = %v", start)
	}
	// The workflow tools and pos_workflow share sessions.
	again, err := e.Start(context.Background(), "bug_fix_v1", "feature-x", nil)
	if err != nil || again.SessionID != id {
		t.Fatalf("engine start = %+v, %v", again, err)
	}
	if out := pos(map[string]any{"action": "get_phase", "session_id": id}); out["current_phase"] != 1.0 {
		t.Fatalf("get_phase = %v", out)
	}
	if out := pos(map[string]any{"action": "get_task", "session_id": id, "phase": 1, "task_number": 2}); !strings.Contains(out["content"].(string), "Locate the cause") {
		t.Fatalf("get_task = %v", out)
	}
	if out := pos(map[string]any{"action": "complete_phase", "session_id": id, "phase": 1, "evidence": phase1OK}); out["checkpoint_passed"] != true || out["next_phase"] != 2.0 {
		t.Fatalf("complete_phase = %v", out)
	}
	if out := pos(map[string]any{"action": "get_state", "session_id": id}); out["current_phase"] != 2.0 || out["progress"] != "1/3" {
		t.Fatalf("get_state = %v", out)
	}
	if out := pos(map[string]any{"action": "get_session", "session_id": id}); out["target_file"] != "feature-x" {
		t.Fatalf("get_session = %v", out)
	}
	if out := pos(map[string]any{"action": "list_sessions"}); out["count"] != 1.0 {
		t.Fatalf("list_sessions = %v", out)
	}
	if out := pos(map[string]any{"action": "delete_session", "session_id": id}); out["deleted"] != true {
		t.Fatalf("delete_session = %v", out)
	}
	wantToolError(t, call(t, cs, ToolPOSWorkflow, map[string]any{"action": "rollback", "session_id": id}, nil), `action "rollback" is not supported`)
	wantToolError(t, call(t, cs, ToolPOSWorkflow, map[string]any{"action": "get_task", "session_id": id}, nil), "requires phase and task_number")
	wantToolError(t, call(t, cs, ToolPOSWorkflow, map[string]any{"action": "get_state"}, nil), "requires session_id")
	wantToolError(t, call(t, cs, ToolPOSWorkflow, map[string]any{"action": "get_state", "session_id": id}, nil), "not found")
}

func TestCurrentDateTool(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "v0"}, nil)
	fixed := time.Date(2026, 3, 9, 14, 30, 5, 0, time.FixedZone("CET", 3600))
	addCurrentDate(srv, func() time.Time { return fixed })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var d CurrentDate
	call(t, cs, ToolCurrentDate, nil, &d)
	want := CurrentDate{ISODateTime: "2026-03-09T14:30:05+01:00", ISODate: "2026-03-09", Time: "14:30:05", Weekday: "Monday",
		Formatted: "Monday, March 9, 2026", Timezone: "CET", UTCDateTime: "2026-03-09T13:30:05Z", Unix: fixed.Unix()}
	if d != want {
		t.Fatalf("current_date = %+v\nwant %+v", d, want)
	}
}
