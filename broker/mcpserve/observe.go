package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/project/textcut"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recentCalls is how many tool calls a mount keeps for the dashboard.
const recentCalls = 20

// Observer is what a mount's MCP server reports: its recent tool calls.
// Its receiving middleware is the one place tool calls are logged, counted
// and listed, each with the transport its request came by.
type Observer struct {
	log    *slog.Logger
	onCall func(c api.ToolCall)

	mu    sync.Mutex // guards calls
	calls []api.ToolCall
}

// NewObserver logs to log; onCall (may be nil) is told of each answered
// tool call, with no lock held. Its middleware is in the mount's chain
// (broker/mounttable/mount.go).
func NewObserver(log *slog.Logger, onCall func(api.ToolCall)) *Observer {
	return &Observer{log: log, onCall: onCall}
}

func (a *Observer) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		transport := TransportName(ctx)
		p, isCall := req.GetParams().(*mcp.CallToolParamsRaw)
		if isCall && (len(p.Arguments) == 0 || string(p.Arguments) == "null") {
			// Absent arguments are no arguments. The SDK's schema
			// default filling panics on a null object.
			p.Arguments = json.RawMessage("{}")
		}
		start := time.Now()
		res, err = a.call(ctx, next, method, req)
		d := time.Since(start)
		session := ""
		if s, ok := req.GetSession().(*mcp.ServerSession); ok && s != nil {
			session = s.ID()
		}
		if method != "tools/call" || !isCall {
			if a.log.Enabled(ctx, slog.LevelDebug) {
				args := []any{"method", method, "transport", transport, "session", session, "duration", d}
				if err != nil {
					args = append(args, "err", err)
				}
				a.log.Debug("mcp request", args...)
			}
			return res, err
		}
		c := api.ToolCall{Time: start.UTC(), Tool: p.Name, Transport: transport, DurationMS: float64(d.Microseconds()) / 1000, OK: true}
		if err != nil {
			c.OK, c.Error = false, err.Error()
		} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			c.OK, c.Error = false, resultText(r)
		}
		if a.log.Enabled(ctx, slog.LevelDebug) {
			args := []any{"tool", c.Tool, "transport", transport, "session", session, "duration", d, "outcome", metrics.Outcome(c.OK)}
			if c.Error != "" {
				args = append(args, "err", c.Error)
			}
			a.log.Debug("tool call", args...)
		}
		a.record(c)
		return res, err
	}
}

// call runs next, turning a panic into an internal error: one bad request
// must not take down the broker and every other project with it.
func (a *Observer) call(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (res mcp.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			a.log.Error("MCP request panicked", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error in %s (logged by the broker)", method)}
		}
	}()
	return next(ctx, method, req)
}

func (a *Observer) record(c api.ToolCall) {
	a.mu.Lock()
	a.calls = append(a.calls, c)
	if len(a.calls) > recentCalls {
		a.calls = slices.Delete(a.calls, 0, len(a.calls)-recentCalls)
	}
	a.mu.Unlock()
	if a.onCall != nil {
		a.onCall(c)
	}
}

// recent returns the kept tool calls, newest first.
func (a *Observer) Recent() []api.ToolCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.calls)
	slices.Reverse(out)
	if out == nil {
		out = []api.ToolCall{}
	}
	return out
}

// resultText is the first text of a tool error result, cut to 300 bytes.
func resultText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return textcut.Cut(t.Text, 300, "…")
		}
	}
	return "tool error"
}
