package mcpserve

import (
	"context"

	"github.com/berth-dev/berth/project/procs"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CountWork counts each message a server handles, while it is handled, as
// work in hand (procs.Enter): two at once, from any client of any
// project, give the broker every processor.
func CountWork(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		procs.Enter()
		defer procs.Leave()
		return next(ctx, method, req)
	}
}
