package project

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/typedtool"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolRecentLogs is the MCP tool that returns the project's recent log records.
const ToolRecentLogs = "get_recent_logs"

// defaultLogLimit is get_recent_logs' limit when the client sends none.
const defaultLogLimit = 100

type recentLogsArgs struct {
	Level string `json:"level,omitempty"`
	Limit *int   `json:"limit,omitempty"`
	Since string `json:"since,omitempty"`
}

// RecentLogsResult is get_recent_logs' structured output.
type RecentLogsResult struct {
	Project string           `json:"project"`
	Records []logring.Record `json:"records"`
	Count   int              `json:"count"`
	// Capacity is how many records the broker keeps for a project.
	Capacity int `json:"capacity"`
}

// recentLogsSchema states the types only: the ranges are checked by
// logring.ParseQuery, whose errors say what to send instead. (No "default"
// either: the SDK's default filling fails on a call with null arguments.)
// It is built once: every server shares the pointer, so that the SDK's
// schema cache resolves it once per process.
var recentLogsSchema = sync.OnceValue(func() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"level": {
				Type:        "string",
				Description: "Lowest level to return: debug (the default: everything kept), info, warn or error.",
			},
			"limit": {
				Type:        "integer",
				Description: fmt.Sprintf("Return at most this many of the newest matching records: 1 to %d, default %d.", logring.MaxLimit, defaultLogLimit),
			},
			"since": {
				Type:        "string",
				Description: `Only records at or after this: an RFC 3339 time ("2026-01-02T15:04:05Z") or a duration meaning that long ago ("10m").`,
			},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
})

// addRecentLogs registers get_recent_logs, answering from the broker's
// ring of this project's records only.
func addRecentLogs(s *mcp.Server, e *Engine) {
	typedtool.Add(s, &mcp.Tool{
		Name:  ToolRecentLogs,
		Title: "Recent broker logs for this project",
		Description: "Returns the broker's recent log records about this project (never another project's), oldest first: " +
			"{project, records: [{time, level, message, attrs}], count, capacity}. With the broker's log_level at debug, every tool call is logged too.",
		InputSchema: recentLogsSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args recentLogsArgs) (*mcp.CallToolResult, RecentLogsResult, error) {
		q, err := logring.ParseQuery(args.Level, args.Limit, args.Since, defaultLogLimit, time.Now())
		if err != nil {
			return nil, RecentLogsResult{}, err
		}
		recs := e.logs.Recent(e.id, q)
		return nil, RecentLogsResult{Project: e.id, Records: recs, Count: len(recs), Capacity: e.logs.PerProject()}, nil
	})
}
