package mcpserve

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestStack is about the stack the handling of an MCP request needs:
// the go-sdk's decoding, schema validation and JSON encoding of a tool
// call's answer reach 8-16 KiB.
const requestStack = 16 << 10

// PresizeStack is the outermost receiving middleware of a mount's server.
// The go-sdk handles every request on a goroutine of its own, whose stack
// starts small; a tool call then grew it three times deep inside the SDK,
// each time copying the stack and adjusting every frame on it (a tenth of
// the broker's CPU under a client calling tools back to back, about 20 us
// per call). Growing it once here, while it is shallow, costs one short
// copy. Notifications, which go no deeper than their handler, are left alone.
func PresizeStack(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !strings.HasPrefix(method, "notifications/") {
			growStack()
		}
		return next(ctx, method, req)
	}
}

// growStack makes the runtime grow the calling goroutine's stack to fit a
// frame of requestStack bytes (as github.com/cockroachdb/cockroach's
// util/growstack does).
//
//go:noinline
func growStack() {
	var buf [requestStack]byte
	keep(buf[:])
}

//go:noinline
func keep(b []byte) { b[0] = 1 }
