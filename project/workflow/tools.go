package workflow

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names.
const (
	ToolListWorkflows         = "list_workflows"
	ToolStartWorkflow         = "start_workflow"
	ToolGetCurrentPhase       = "get_current_phase"
	ToolGetTask               = "get_task"
	ToolCompletePhase         = "complete_phase"
	ToolGetWorkflowState      = "get_workflow_state"
	ToolListWorkflowSessions  = "list_workflow_sessions"
	ToolDeleteWorkflowSession = "delete_workflow_session"
	ToolPOSWorkflow           = "pos_workflow"
	ToolCurrentDate           = "current_date"
)

// AddTools registers the workflow tools on s: the workflow group (one tool
// per operation) and/or the pos group (the single praxis-os compatible
// pos_workflow tool). current_date is separate: see [AddCurrentDate]. It
// returns the names it added, for the caller's tool count.
func AddTools(s *mcp.Server, e *Engine, workflowGroup, posGroup bool) (names []string) {
	if workflowGroup {
		names = append(names,
			addListWorkflows(s, e),
			addStartWorkflow(s, e),
			addGetCurrentPhase(s, e),
			addGetTask(s, e),
			addCompletePhase(s, e),
			addGetWorkflowState(s, e),
			addListWorkflowSessions(s, e),
			addDeleteWorkflowSession(s, e),
		)
	}
	if posGroup {
		names = append(names, addPOSWorkflow(s, e))
	}
	return names
}

// handler adapts an engine call to a typed tool handler: the output becomes
// the structured result, an error becomes a tool error with a remediation line.
func handler[In, Out any](f func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := f(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, asToolError(err)
		}
		return nil, out, nil
	}
}

func readOnly(title string) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}
}

func writes(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &no}
}
