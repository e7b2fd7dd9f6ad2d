package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// posActions are the pos_workflow actions Berth supports, in the order the
// praxis-os docs list them.
var posActions = []string{
	"list_workflows", "start", "get_phase", "get_task", "complete_phase",
	"get_state", "list_sessions", "get_session", "delete_session",
}

type posWorkflowArgs struct {
	Action       string         `json:"action" jsonschema:"one of list_workflows, start, get_phase, get_task, complete_phase, get_state, list_sessions, get_session, delete_session"`
	Category     string         `json:"category,omitempty" jsonschema:"list_workflows: only this category"`
	WorkflowType string         `json:"workflow_type,omitempty" jsonschema:"start: the workflow to run"`
	TargetFile   string         `json:"target_file,omitempty" jsonschema:"start: a path relative to the project root, or a feature name"`
	Options      map[string]any `json:"options,omitempty" jsonschema:"start: options kept with the session; a dynamic workflow reads its source from one (spec_execution_v1: spec_path)"`
	SessionID    string         `json:"session_id,omitempty" jsonschema:"the session, for every action but list_workflows, start and list_sessions"`
	Phase        *int           `json:"phase,omitempty" jsonschema:"get_task and complete_phase: the phase number"`
	TaskNumber   *int           `json:"task_number,omitempty" jsonschema:"get_task: the task number"`
	Evidence     map[string]any `json:"evidence,omitempty" jsonschema:"complete_phase: the evidence the gate asks for"`
	Skip         bool           `json:"skip,omitempty" jsonschema:"complete_phase: skip a phase marked skippable"`
	Status       string         `json:"status,omitempty" jsonschema:"list_sessions: active, completed or all"`
	Scope        string         `json:"scope,omitempty" jsonschema:"list_sessions: project (the default) or repository (the sibling git worktrees' sessions too, read-only)"`
}

// posSchema is the inferred schema, opened to unknown keys: agents that
// follow praxis-os docs pass parameters Berth does not use. It is built once:
// every server shares the pointer, so that the SDK's schema cache resolves it
// once per process.
var posSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.For[posWorkflowArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("pos_workflow schema: %v", err))
	}
	s.AdditionalProperties = nil
	return s
})

func addPOSWorkflow(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolPOSWorkflow,
		Description: "praxis-os compatible workflow tool: one tool, many actions (" + strings.Join(posActions, ", ") +
			"), running on the same engine and sessions as the workflow tools.",
		InputSchema: posSchema(),
		Annotations: writes("Workflow (praxis-os)", true, false),
	}, handler(func(ctx context.Context, in posWorkflowArgs) (map[string]any, error) {
		out, err := e.posDispatch(ctx, in)
		if err != nil {
			return nil, err
		}
		return posResult(in.Action, out)
	}))
	return ToolPOSWorkflow
}

// posDispatch runs one pos_workflow action.
func (e *Engine) posDispatch(ctx context.Context, in posWorkflowArgs) (any, error) {
	switch in.Action {
	case "list_workflows":
		return e.ListWorkflows(ctx, in.Category)
	case "start":
		if in.WorkflowType == "" {
			return nil, posMissing(in.Action, "workflow_type")
		}
		return e.Start(ctx, in.WorkflowType, in.TargetFile, in.Options)
	case "list_sessions":
		return e.SessionsIn(ctx, in.Status, in.Scope)
	case "get_phase", "get_task", "complete_phase", "get_state", "get_session", "delete_session":
		if in.SessionID == "" {
			return nil, posMissing(in.Action, "session_id")
		}
		return e.posSessionAction(ctx, in)
	}
	return nil, newError(ErrInvalidArgument, "use one of: "+strings.Join(posActions, ", "),
		"pos_workflow action %q is not supported by Berth", in.Action)
}

// posSessionAction runs an action on one session.
func (e *Engine) posSessionAction(ctx context.Context, in posWorkflowArgs) (any, error) {
	switch in.Action {
	case "get_phase":
		return e.CurrentPhase(ctx, in.SessionID)
	case "get_task":
		if in.Phase == nil || in.TaskNumber == nil {
			return nil, posMissing(in.Action, "phase and task_number")
		}
		return e.Task(ctx, in.SessionID, *in.Phase, *in.TaskNumber)
	case "complete_phase":
		if in.Phase == nil {
			return nil, posMissing(in.Action, "phase")
		}
		return e.CompletePhase(ctx, in.SessionID, *in.Phase, in.Evidence, in.Skip)
	case "get_state":
		return e.State(ctx, in.SessionID)
	case "get_session":
		return e.Session(ctx, in.SessionID)
	default: // delete_session
		return e.DeleteSession(ctx, in.SessionID)
	}
}

func posMissing(action, param string) error {
	return newError(ErrInvalidArgument, "pass "+param+" with action "+action, "action %s requires %s", action, param)
}

// posResult shapes a result as praxis-os does: the result's fields plus
// status "success" and the action. A session's own status, which the
// success status replaces, is kept as session_status.
func posResult(action string, v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", action, err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode %s result: %w", action, err)
	}
	if st, ok := out["status"]; ok {
		out["session_status"] = st // a session's own status (active, completed)
	}
	out["status"] = "success"
	out["action"] = action
	return out, nil
}
