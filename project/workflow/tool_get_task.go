package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type getTaskArgs struct {
	SessionID  string `json:"session_id" jsonschema:"the id start_workflow returned"`
	Phase      int    `json:"phase" jsonschema:"the phase number: the current phase or a completed one"`
	TaskNumber int    `json:"task_number" jsonschema:"the task number, from 1, as get_current_phase lists them"`
}

func addGetTask(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name:        ToolGetTask,
		Description: "Return the full text of one task of the current phase (or of a completed phase). Later phases stay locked.",
		Annotations: readOnly("Get task"),
	}, handler(func(ctx context.Context, in getTaskArgs) (TaskResult, error) {
		return e.Task(ctx, in.SessionID, in.Phase, in.TaskNumber)
	}))
	return ToolGetTask
}
