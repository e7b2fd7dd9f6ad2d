package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func addGetWorkflowState(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolGetWorkflowState,
		Description: "Return a session's full state: current and completed phases, checkpoints, " +
			"the evidence submitted for each phase, and timestamps.",
		Annotations: readOnly("Get workflow state"),
	}, handler(func(ctx context.Context, in sessionArgs) (StateResult, error) {
		return e.State(ctx, in.SessionID)
	}))
	return ToolGetWorkflowState
}
