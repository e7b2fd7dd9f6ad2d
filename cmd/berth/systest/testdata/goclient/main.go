// Command goclient reaches a Berth project's tools with the go-sdk, as a
// sub-agent does. Usage: goclient <project-root>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withHeaders adds the state file's headers (the bearer token) to every request.
type withHeaders map[string]string

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// 1. Discover, and trust the state file only if its broker is alive.
	raw, err := os.ReadFile(filepath.Join(root, ".praxis-os", ".mcp_server_state.json"))
	if err != nil {
		return fmt.Errorf("the project is not served: %w", err)
	}
	var state struct {
		URL     *string           `json:"url"`
		PID     int               `json:"pid"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(raw, &state); err != nil || state.URL == nil {
		return fmt.Errorf("no HTTP endpoint for %s (%v): spawn berth-shim instead", root, err)
	}
	if syscall.Kill(state.PID, 0) != nil {
		return fmt.Errorf("the broker that wrote the state file (pid %d) is gone", state.PID)
	}
	// 2. Connect over streamable HTTP (mcp.SSEClientTransport speaks /sse).
	client := mcp.NewClient(&mcp.Implementation{Name: "goclient", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   *state.URL,
		HTTPClient: &http.Client{Transport: withHeaders(state.Headers)},
	}, nil)
	if err != nil {
		return err
	}
	defer session.Close()
	// 3. Verify: get_server_info names the project and the transport.
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("get_server_info: %v", res.Content)
	}
	names := []string{}
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"tools": names, "info": res.StructuredContent})
}
