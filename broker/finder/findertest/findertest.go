// Package findertest serves the fixture MCP server of the finder's tests
// and figures: "workspace", 100 tools with realistic names, descriptions
// and parameters (repositories, CI, chat, mail, calendar, databases,
// cloud, monitoring, tickets, secrets; workspace.json), each answering a
// call with its name and arguments. A test binary serves it on stdio when
// re-run by a hosted-server declaration from [Decl] ([ServeIfAsked] in its
// TestMain).
package findertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed workspace.json
var workspaceJSON []byte

// param is one parameter of a fixture tool, as workspace.json writes it.
type param struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Items       string   `json:"items"`
	Enum        []string `json:"enum"`
	Description string   `json:"description"`
	Required    bool     `json:"required"`
}

// WorkspaceTools are the fixture server's 100 tools.
func WorkspaceTools() []*mcp.Tool {
	var list []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Params      []param `json:"params"`
	}
	if err := json.Unmarshal(workspaceJSON, &list); err != nil {
		panic(fmt.Sprintf("findertest: workspace.json: %v", err))
	}
	out := make([]*mcp.Tool, len(list))
	for i, t := range list {
		s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		for _, p := range t.Params {
			ps := &jsonschema.Schema{Type: p.Type, Description: p.Description}
			for _, e := range p.Enum {
				ps.Enum = append(ps.Enum, e)
			}
			if p.Items != "" {
				ps.Items = &jsonschema.Schema{Type: p.Items}
			}
			s.Properties[p.Name] = ps
			if p.Required {
				s.Required = append(s.Required, p.Name)
			}
		}
		out[i] = &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: s}
	}
	return out
}

// NewWorkspace is the fixture server: each tool answers with a text
// naming itself and its arguments as JSON.
func NewWorkspace() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "workspace", Version: "1.0.0"}, nil)
	for _, t := range WorkspaceTools() {
		name := t.Name
		s.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := string(req.Params.Arguments)
			if args == "" {
				args = "{}"
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("workspace %s %s", name, args)}}}, nil
		})
	}
	return s
}

// serveEnv names the server a re-run test binary serves.
const serveEnv = "BERTH_FINDERTEST_SERVE"

// ServeIfAsked serves the fixture server on stdin and stdout and exits
// when the process was started by [Decl]'s command; otherwise it returns.
// Call it first in TestMain.
func ServeIfAsked() {
	if os.Getenv(serveEnv) != "workspace" {
		return
	}
	if err := NewWorkspace().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("findertest workspace: %v", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command is how a hosted-server declaration runs the fixture server: this
// test binary again, with the environment that makes ServeIfAsked serve.
func Command(tb testing.TB) (command string, env map[string]string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe, map[string]string{serveEnv: "workspace"}
}
