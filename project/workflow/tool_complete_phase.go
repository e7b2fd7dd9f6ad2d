package workflow

import (
	"context"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type completePhaseArgs struct {
	SessionID string         `json:"session_id" jsonschema:"the id start_workflow returned"`
	Phase     int            `json:"phase" jsonschema:"the current phase number"`
	Evidence  map[string]any `json:"evidence" jsonschema:"the evidence fields the phase's gate asks for (at most 1 MiB as JSON)"`
	Skip      bool           `json:"skip,omitempty" jsonschema:"skip a phase marked skippable instead of passing its gate (evidence is kept as the reason)"`
}

func addCompletePhase(s *mcp.Server, e *Engine) string {
	typedtool.Add(s, &mcp.Tool{
		Name: ToolCompletePhase,
		Description: "Submit evidence for the current phase. The gate checks required fields, types and declared checks: " +
			"a strict gate that fails records the attempt and does not advance (see errors and fields_missing); " +
			"a non-strict gate passes with warnings. On success the result carries the next phase's content. " +
			"A phase marked skippable may be skipped with skip: true.",
		Annotations: writes("Complete phase", false, false),
	}, handler(func(ctx context.Context, in completePhaseArgs) (CompleteResult, error) {
		return e.CompletePhase(ctx, in.SessionID, in.Phase, in.Evidence, in.Skip)
	}))
	return ToolCompletePhase
}
