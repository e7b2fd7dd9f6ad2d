package hosted

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeSubscriptions makes the fake server (FAKE_SUBSCRIBE set) declare
// resources.subscribe and serve the template fake://notes/{id}; its tools
// "subscribed" (the URIs Berth is subscribed to, one a line) and "touch"
// (sends notifications/resources/updated for the URI in text) let tests
// see what reached it.
func fakeSubscriptions() (*mcp.ServerOptions, func(*mcp.Server)) {
	var mu sync.Mutex
	subs := map[string]bool{}
	register := func(s *mcp.Server) {
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "fake://notes/{id}", Name: "note"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "note"}}}, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "subscribed"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			return text(strings.Join(sortedKeys(subs), "\n")), nil, nil
		})
		mcp.AddTool(s, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("touched"), nil, s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.Text})
		})
	}
	return &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			subs[req.Params.URI] = true
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			delete(subs, req.Params.URI)
			return nil
		},
	}, register
}

// subscribedLines splits the fake's "subscribed" answer.
func subscribedLines(s string) []string {
	lines := strings.Split(s, "\n")
	return slices.DeleteFunc(lines, func(l string) bool { return l == "" })
}
