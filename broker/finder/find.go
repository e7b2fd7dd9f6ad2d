package finder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FoundTool is one tool find_tools answers.
type FoundTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Server      string          `json:"server,omitempty"` // the hosted server it comes from
	InputSchema json.RawMessage `json:"input_schema"`
}

// FindResult is find_tools's answer.
type FindResult struct {
	Tools []FoundTool `json:"tools"`
	// Servers are the hosted servers whose tools are not all ranked as
	// they are now (not known yet, awaiting approval, ranked from their
	// last run), with what to do.
	Servers []ServerNote `json:"servers,omitempty"`
	Total   int          `json:"total"` // tools ranked
}

type findArgs struct {
	Query string `json:"query"`
	N     int    `json:"n"`
}

// find answers find_tools: its errors are tool errors the model reads.
func (f *Finder) find(ctx context.Context, params *mcp.CallToolParamsRaw) (mcp.Result, error) {
	var args findArgs
	if err := decodeArgs(params.Arguments, &args); err != nil {
		return toolError("find_tools: %v", err), nil
	}
	if args.N == 0 {
		args.N = DefaultResults
	}
	if args.N < 1 || args.N > MaxResults {
		return toolError("find_tools: n must be between 1 and %d (got %d)", MaxResults, args.N), nil
	}
	if strings.TrimSpace(args.Query) == "" {
		return toolError("find_tools: query is empty: say what you want to do"), nil
	}
	res, err := f.Find(ctx, args.Query, args.N)
	if err != nil {
		return toolError("find_tools: %v", err), nil
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}, nil
}

// Find ranks the project's tools for query, as find_tools does.
func (f *Finder) Find(ctx context.Context, query string, n int) (*FindResult, error) {
	v, err := f.current(ctx)
	if err != nil {
		return nil, err
	}
	found, err := v.cat.Find(query, n)
	if err != nil {
		return nil, err
	}
	res := &FindResult{Tools: make([]FoundTool, len(found)), Servers: v.servers, Total: v.cat.Len()}
	for i, t := range found {
		res.Tools[i] = FoundTool{Name: t.Tool.Name, Title: t.Tool.Title, Description: t.Tool.Description, Server: t.Server, InputSchema: t.Schema}
	}
	return res, nil
}

// decodeArgs decodes a tool's arguments strictly: an unknown member is
// refused by name.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// toolError is a tool result with isError: what the model reads and can
// act on.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
