package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func addDeleteWorkflowSession(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name:        ToolDeleteWorkflowSession,
		Description: "Delete a workflow session and its recorded evidence. This cannot be undone.",
		Annotations: writes("Delete workflow session", true, true),
	}, handler(func(ctx context.Context, in sessionArgs) (DeleteResult, error) {
		return e.DeleteSession(ctx, in.SessionID)
	}))
	return ToolDeleteWorkflowSession
}
