package finder

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/search"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The finder's own tools.
const (
	FindTools = "find_tools"
	CallTool  = "call_tool"
)

// Core are Berth's own tools that a finder listing keeps (those the
// project's tool groups enable): what tells an agent about the project,
// its standards and its workflows. The other tools are found with
// find_tools and called with call_tool.
var Core = []string{"get_server_info", "search_standards", "current_date", "start_workflow", "pos_workflow"}

// Find results: how many find_tools returns by default and at most.
const (
	DefaultResults = 5
	MaxResults     = 20
)

// findTool and callTool are the finder's tools as a finder listing shows
// them.
var findTool = &mcp.Tool{
	Name:  FindTools,
	Title: "Find a tool",
	Description: "Find the tools for a task among every tool this project offers (Berth's own and those of the MCP servers it hosts; " +
		"only a few are listed). Say what you want done in your own words. Returns the best matches, each with its name, " +
		"description and full input schema, ready for call_tool.",
	InputSchema: &jsonschema.Schema{
		Type:     "object",
		Required: []string{"query"},
		Properties: map[string]*jsonschema.Schema{
			"query": {Type: "string", Description: "What you want to do, in your own words."},
			"n": {Type: "integer", Description: fmt.Sprintf("How many tools to return (1 to %d).", MaxResults),
				Default: json.RawMessage(fmt.Sprint(DefaultResults)), Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(MaxResults))},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	},
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
}

var callTool = &mcp.Tool{
	Name:  CallTool,
	Title: "Call a found tool",
	Description: "Call a tool find_tools found, by its name, with arguments that match its input schema. " +
		"It runs as if called directly: its progress, result and errors are its own.",
	InputSchema: &jsonschema.Schema{
		Type:     "object",
		Required: []string{"name"},
		Properties: map[string]*jsonschema.Schema{
			"name":      {Type: "string", Description: "The tool's name, as find_tools gave it."},
			"arguments": {Type: "object", Description: "The tool's arguments."},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	},
}

// Middleware shapes tools/list for sessions in finder mode and answers
// find_tools and call_tool. The broker adds it just outside the hosted
// servers' middleware, so that a call_tool reaches a hosted tool as a
// direct call does (a lazy server starts, one awaiting approval says how
// to approve it), inside the limits and the observer.
func (f *Finder) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			lr, ok := res.(*mcp.ListToolsResult)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if !ok || f.ModeOf(ctx, ss, len(lr.Tools)) != ModeFinder {
				return res, err
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil {
				cursor = p.Cursor
			}
			return f.listing(ss, lr, cursor), nil
		case "tools/call":
			params, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || params == nil {
				break
			}
			switch params.Name {
			case FindTools:
				return f.find(ctx, params)
			case CallTool:
				return f.call(ctx, next, req, params)
			}
		}
		return next(ctx, method, req)
	}
}

// ModeOf is the mode of the session ss whose request carries ctx, for a
// project offering tools tools.
func (f *Finder) ModeOf(ctx context.Context, ss *mcp.ServerSession, tools int) Mode {
	return decide(modeAsked(ctx), f.opts.Config(), ss, tools)
}

// listing is a finder session's tools/list: find_tools, call_tool, the
// core tools full lists, and the tools promoted in the session. A finder
// listing is one page: a later page is empty.
func (f *Finder) listing(ss *mcp.ServerSession, full *mcp.ListToolsResult, cursor string) *mcp.ListToolsResult {
	out := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	if cursor != "" {
		return out
	}
	out.Tools = append(out.Tools, findTool, callTool)
	promoted := f.promotedIn(ss)
	for _, t := range full.Tools {
		core := !strings.Contains(t.Name, Sep) && slices.Contains(Core, t.Name)
		if core || promoted[t.Name] {
			out.Tools = append(out.Tools, t)
		}
	}
	return out
}

// ListingTokens estimates what a listing costs a model at every turn: the
// tokens (as search_standards estimates them) of what clients send it of
// each tool, its name, description and input schema as JSON. Output
// schemas, annotations and _meta stay with the client.
func ListingTokens(tools []*mcp.Tool) int {
	type sent struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema any    `json:"input_schema"`
	}
	out := make([]sent, len(tools))
	for i, t := range tools {
		out[i] = sent{t.Name, t.Description, t.InputSchema}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return 0
	}
	return search.EstimateTokens(string(raw))
}
