package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listSessionsArgs struct {
	Status string `json:"status,omitempty" jsonschema:"active, completed or all (the default)"`
}

func addListWorkflowSessions(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name:        ToolListWorkflowSessions,
		Description: "List this project's workflow sessions with their progress, most recently updated first.",
		Annotations: readOnly("List workflow sessions"),
	}, handler(func(ctx context.Context, in listSessionsArgs) (SessionList, error) {
		return e.Sessions(ctx, in.Status)
	}))
	return ToolListWorkflowSessions
}
