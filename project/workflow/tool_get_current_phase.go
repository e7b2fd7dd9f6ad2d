package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sessionArgs struct {
	SessionID string `json:"session_id" jsonschema:"the id start_workflow returned"`
}

func addGetCurrentPhase(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolGetCurrentPhase,
		Description: "Return the session's current phase: its overview (phase.md), its tasks, and the evidence " +
			"its gate expects from complete_phase.",
		Annotations: readOnly("Get current phase"),
	}, handler(func(ctx context.Context, in sessionArgs) (PhaseResult, error) {
		return e.CurrentPhase(ctx, in.SessionID)
	}))
	return ToolGetCurrentPhase
}
