package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listSessionsArgs struct {
	Status string `json:"status,omitempty" jsonschema:"active, completed or all (the default)"`
	Scope  string `json:"scope,omitempty" jsonschema:"project (the default): this project's sessions; repository: the sessions of every worktree of its git repository too, read-only"`
}

func addListWorkflowSessions(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolListWorkflowSessions,
		Description: "List this project's workflow sessions with their progress, most recently updated first. " +
			"With scope repository, list the sessions of the sibling git worktrees of the repository too " +
			"(each with its project, worktree, branch, phase and last checkpoint; read-only from here).",
		Annotations: readOnly("List workflow sessions"),
	}, handler(func(ctx context.Context, in listSessionsArgs) (SessionList, error) {
		return e.SessionsIn(ctx, in.Status, in.Scope)
	}))
	return ToolListWorkflowSessions
}
