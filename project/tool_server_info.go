package project

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInfoResult is get_server_info's structured output.
type ServerInfoResult struct {
	Server       ServerSection  `json:"server"`
	Project      ProjectSection `json:"project"`
	Capabilities Capabilities   `json:"capabilities"`
	// Servers are the other MCP servers Berth hosts for the project, whose
	// tools are served as <server>__<tool>; absent when none is declared.
	Servers []HostedServer `json:"servers,omitempty"`
	// Warnings name settings of the project's config that Berth ignored
	// (a tool group it does not serve), with the fix.
	Warnings []string `json:"warnings,omitempty"`
}

// ServerSection describes the broker.
type ServerSection struct {
	Name          string  `json:"name"`
	Version       string  `json:"version"`
	Transport     string  `json:"transport"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	PID           int     `json:"pid"`
	StartedAt     string  `json:"started_at"`
}

// ProjectSection describes the project.
type ProjectSection struct {
	Name        string   `json:"name"`
	Root        string   `json:"root"`
	AgentOSPath string   `json:"agent_os_path"`
	Git         *GitInfo `json:"git"`
}

// Capabilities lists what this endpoint offers.
type Capabilities struct {
	ToolsAvailable []string `json:"tools_available"`
	ToolGroups     []string `json:"tool_groups"`
	Transports     []string `json:"transports"`
	StandardsDirs  []string `json:"standards_dirs"`
}

type serverInfoArgs struct{}

// serverInfoSchemas are the tool's input and output schemas, inferred once.
var serverInfoSchemas = sync.OnceValues(func() (*jsonschema.Schema, *jsonschema.Schema) {
	in, err := jsonschema.For[serverInfoArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("get_server_info input schema: %v", err))
	}
	out, err := jsonschema.For[ServerInfoResult](nil)
	if err != nil {
		panic(fmt.Sprintf("get_server_info output schema: %v", err))
	}
	return in, out
})

// addServerInfo registers get_server_info with a plain handler: agents call
// it often, and the typed handler's validation of the (empty) arguments and
// of the output against its schema cost most of a call. It offers the same
// schemas and answers as a typed tool would.
func addServerInfo(s *mcp.Server, e *Engine) {
	in, out := serverInfoSchemas()
	s.AddTool(&mcp.Tool{
		Name:         "get_server_info",
		Title:        "Project information discovery",
		Description:  "Returns the server (version, transport, uptime, pid), the project (name, root, .praxis-os path, git remote/branch/commit/status) and the tools available. The git state is read at most once a second.",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema:  in,
		OutputSchema: out,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := noArguments(req.Params.Arguments); err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(fmt.Errorf("validating \"arguments\": %w", err))
			return res, nil
		}
		raw, err := json.Marshal(e.serverInfo(ctx, e.transport(ctx)))
		if err != nil {
			return nil, fmt.Errorf("marshal get_server_info: %w", err)
		}
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(raw),
			Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		}, nil
	})
}

// noArguments accepts absent, null or empty-object arguments.
func noArguments(args json.RawMessage) error {
	trimmed := bytes.Trim(args, " \t\r\n") // JSON whitespace
	if len(trimmed) == 0 || string(trimmed) == "null" || string(trimmed) == "{}" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return fmt.Errorf("arguments must be an object: %w", err)
	}
	if len(m) > 0 {
		keys := slices.Sorted(maps.Keys(m))
		return fmt.Errorf("get_server_info takes no arguments; unexpected %q", keys)
	}
	return nil
}

func (e *Engine) serverInfo(ctx context.Context, transport string) ServerInfoResult {
	g := e.git.get(ctx, e.root)
	name := projectName(g, e.root)
	var dirs []string
	for _, d := range []string{e.cfg.RAG.StandardsPath, e.cfg.RAG.UsagePath, e.cfg.RAG.WorkflowsPath} {
		if fi, err := os.Stat(filepath.Join(e.root, d)); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	tools, servers := e.availableTools()
	return ServerInfoResult{
		Servers: servers,
		Server: ServerSection{
			Name:          "berth",
			Version:       e.server.Version,
			Transport:     transport,
			UptimeSeconds: time.Since(e.server.StartedAt).Seconds(),
			PID:           e.server.PID,
			StartedAt:     e.server.StartedAt.UTC().Format(time.RFC3339),
		},
		Project: ProjectSection{
			Name:        name,
			Root:        e.root,
			AgentOSPath: filepath.Join(e.root, config.Dir),
			Git:         g,
		},
		Capabilities: Capabilities{
			ToolsAvailable: tools,
			ToolGroups:     e.cfg.MCP.EnabledToolGroups,
			Transports:     e.transports,
			StandardsDirs:  dirs,
		},
		Warnings: e.cfg.Warnings,
	}
}
