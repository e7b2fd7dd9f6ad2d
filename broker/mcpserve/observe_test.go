package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/berth-dev/berth/api"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callRequest(name, args string) *mcp.ServerRequest[*mcp.CallToolParamsRaw] {
	return &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(args)}}
}

func TestObserverTurnsAPanicIntoAnErrorAndRecordsIt(t *testing.T) {
	var logged strings.Builder
	var seen []api.ToolCall
	o := NewObserver(slog.New(slog.NewTextHandler(&logged, nil)), func(c api.ToolCall) { seen = append(seen, c) })
	h := o.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("boom")
	})
	res, err := h(withTransport(context.Background(), named(t, TransportHTTP)), "tools/call", callRequest("search_standards", `{"query":"x"}`))
	var rpcErr *jsonrpc.Error
	if res != nil || !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("a panicking handler answered %v, %v; want an internal JSON-RPC error", res, err)
	}
	if len(seen) != 1 || seen[0].OK || seen[0].Tool != "search_standards" || seen[0].Transport != TransportHTTP {
		t.Errorf("recorded %+v, want one failed search_standards call over http", seen)
	}
	if !strings.Contains(logged.String(), "MCP request panicked") || !strings.Contains(logged.String(), "boom") {
		t.Errorf("the panic was not logged:\n%s", logged.String())
	}
	if got := o.Recent(); len(got) != 1 {
		t.Errorf("recent calls %+v", got)
	}
}

func TestObserverGivesNullArgumentsAsAnEmptyObject(t *testing.T) {
	o := NewObserver(slog.New(slog.DiscardHandler), nil)
	for _, args := range []string{"", "null", `{"a":1}`} {
		var got string
		h := o.Middleware(func(_ context.Context, _ string, req mcp.Request) (mcp.Result, error) {
			got = string(req.GetParams().(*mcp.CallToolParamsRaw).Arguments)
			return &mcp.CallToolResult{}, nil
		})
		if _, err := h(context.Background(), "tools/call", callRequest("t", args)); err != nil {
			t.Fatal(err)
		}
		want := args
		if args == "" || args == "null" {
			want = "{}"
		}
		if got != want {
			t.Errorf("arguments %q reached the tool as %q, want %q", args, got, want)
		}
	}
}

func TestObserverKeepsTheLastCallsNewestFirst(t *testing.T) {
	o := NewObserver(slog.New(slog.DiscardHandler), nil)
	h := o.Middleware(func(_ context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		if req.GetParams().(*mcp.CallToolParamsRaw).Name == "bad" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "nope"}}}, nil
		}
		return &mcp.CallToolResult{}, nil
	})
	for i := range recentCalls + 5 {
		name := "good"
		if i == recentCalls+4 {
			name = "bad"
		}
		h(context.Background(), "tools/call", callRequest(name, "{}"))
	}
	got := o.Recent()
	if len(got) != recentCalls || got[0].Tool != "bad" || got[0].OK || got[0].Error != "nope" || !got[1].OK {
		t.Errorf("kept %d calls, newest %+v", len(got), got[0])
	}
}
