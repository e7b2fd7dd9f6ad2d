package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listWorkflowsArgs struct {
	Category string `json:"category,omitempty" jsonschema:"only workflows whose metadata names this category"`
}

func addListWorkflows(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolListWorkflows,
		Description: "List the project's phase-gated workflows (from its workflows folder) with their phases. " +
			"Broken definitions are listed with their error, ready ones with their warnings; " +
			"dynamic ones name the start option their phases come from.",
		Annotations: readOnly("List workflows"),
	}, handler(func(ctx context.Context, in listWorkflowsArgs) (WorkflowList, error) {
		return e.ListWorkflows(ctx, in.Category)
	}))
	return ToolListWorkflows
}
