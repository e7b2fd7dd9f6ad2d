package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type startWorkflowArgs struct {
	WorkflowType string         `json:"workflow_type" jsonschema:"the workflow to run, as list_workflows names it"`
	TargetFile   string         `json:"target_file" jsonschema:"what the workflow works on: a path relative to the project root, or a feature name"`
	Options      map[string]any `json:"options,omitempty" jsonschema:"options kept with the session; a dynamic workflow reads its source from one (spec_execution_v1: spec_path, the spec folder holding tasks.md)"`
}

func addStartWorkflow(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolStartWorkflow,
		Description: "Start a workflow on a target and return its session_id and first phase. " +
			"If an active session exists for the same workflow and target it is resumed (resumed: true), " +
			"so the IDE and its sub-agents share one session.",
		Annotations: writes("Start workflow", false, true),
	}, handler(func(ctx context.Context, in startWorkflowArgs) (StartResult, error) {
		return e.Start(ctx, in.WorkflowType, in.TargetFile, in.Options)
	}))
	return ToolStartWorkflow
}
