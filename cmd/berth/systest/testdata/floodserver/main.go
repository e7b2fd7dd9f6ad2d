// Command floodserver is an MCP server (stdio) for the hostile system
// test: its tool "flood" sends count notifications/resources/updated (for
// flood://updates, to a subscribed client) and count log messages of pad
// bytes each, as fast as its client reads them.
package main

import (
	"context"
	"log"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const uri = "flood://updates"

type floodArgs struct {
	Count int `json:"count"`
	Pad   int `json:"pad"` // bytes of padding in each log message
}

func main() {
	var srv *mcp.Server
	srv = mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	srv.AddResource(&mcp.Resource{URI: uri, Name: "updates"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "changing"}}}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "flood", Description: "send count resource updates and count log messages"},
		func(ctx context.Context, req *mcp.CallToolRequest, a floodArgs) (*mcp.CallToolResult, any, error) {
			pad := strings.Repeat("x", a.Pad)
			for i := range a.Count {
				if err := srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
					return nil, nil, err
				}
				if err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "flood", Data: map[string]any{"n": i, "pad": pad}}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}
