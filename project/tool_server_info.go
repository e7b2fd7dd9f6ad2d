package project

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInfoResult is get_server_info's structured output.
type ServerInfoResult struct {
	Server       ServerSection  `json:"server"`
	Project      ProjectSection `json:"project"`
	Capabilities Capabilities   `json:"capabilities"`
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

func addServerInfo(s *mcp.Server, e *Engine, transport string) string {
	const name = "get_server_info"
	mcp.AddTool(s, &mcp.Tool{
		Name:        name,
		Title:       "Project information discovery",
		Description: "Returns the server (version, transport, uptime, pid), the project (name, root, .praxis-os path, git remote/branch/commit/status) and the tools available. The git state is read at most once a second.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ serverInfoArgs) (*mcp.CallToolResult, ServerInfoResult, error) {
		return nil, e.serverInfo(ctx, transport), nil
	})
	return name
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
	return ServerInfoResult{
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
			ToolsAvailable: e.ToolNames(),
			ToolGroups:     e.cfg.MCP.EnabledToolGroups,
			Transports:     []string{"stdio", "http", "sse", "websocket"},
			StandardsDirs:  dirs,
		},
	}
}
