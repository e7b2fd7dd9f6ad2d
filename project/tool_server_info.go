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

// ServerInfoResult is get_server_info's structured output: praxis-os's
// shape (server, project, capabilities with the same names and types) and
// Berth's own fields beside them.
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
	// Missing names what the broker cannot do for the project right now
	// (no port for sub-agents, a state file it cannot write, a config
	// edit it could not apply), each with its fix; empty when it does
	// everything.
	Missing []string `json:"missing,omitempty"`
}

// ServerSection describes the broker.
type ServerSection struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Transport string `json:"transport"` // how this session reached the server: stdio (the shim), http, sse, websocket
	// TransportMode is what the project's state file offers sub-agents
	// (praxis-os's transport_mode): dual, stdio or http; "" when the
	// broker has written none.
	TransportMode string `json:"transport_mode"`
	// URL is the project's HTTP endpoint for sub-agents; "" while it has no port.
	URL           string  `json:"url,omitempty"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	PID           int     `json:"pid"`
	StartedAt     string  `json:"started_at"`
}

// ProjectSection describes the project.
type ProjectSection struct {
	Name string `json:"name"`
	Root string `json:"root"`
	// Kind is "project" (a root holding .praxis-os/) or "folder" (a
	// folder in no project: no standards, no workflows, no state file).
	Kind         string   `json:"kind"`
	PraxisOSPath string   `json:"praxis_os_path"` // praxis-os's name
	AgentOSPath  string   `json:"agent_os_path"`  // the same path, by its older name
	Git          *GitInfo `json:"git"`
}

// Capabilities lists what this endpoint offers. The first fields are
// praxis-os's.
type Capabilities struct {
	ToolsAvailable  int  `json:"tools_available"`  // how many tools the server lists
	RAGEnabled      bool `json:"rag_enabled"`      // search_standards is served (the rag tool group)
	WorkflowEnabled bool `json:"workflow_enabled"` // workflow tools are served (workflow or pos)
	BrowserEnabled  bool `json:"browser_enabled"`  // always false: Berth serves no browser tools
	DualTransport   bool `json:"dual_transport"`   // the state file offers the IDE's stdio and HTTP (transport_mode dual)
	HTTPTransport   bool `json:"http_transport"`   // the project's HTTP endpoint is served now

	Tools         []string `json:"tools"` // the tools' names, in the server's order
	ToolGroups    []string `json:"tool_groups"`
	Transports    []string `json:"transports"`
	StandardsDirs []string `json:"standards_dirs"`
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
		Description:  "Returns the server (version, transport, transport_mode, url, uptime, pid), the project (name, root, praxis_os_path, git remote/branch/commit/status), the capabilities (tools_available as a count, rag_enabled, workflow_enabled, dual_transport, http_transport, the tools' names) and what the broker cannot do for the project right now (missing). The git state is read at most once a second.",
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
	var remote string
	if g != nil {
		remote = g.Remote
	}
	name := projectName(remote, e.root)
	var dirs []string
	rag := e.Config().RAG
	for _, d := range []string{rag.StandardsPath, rag.UsagePath, rag.WorkflowsPath} {
		if fi, err := os.Stat(filepath.Join(e.root, d)); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	ep := e.endpoint()
	tools, servers := e.availableTools()
	cfg := e.Config()
	praxisPath := filepath.Join(e.root, config.Dir)
	return ServerInfoResult{
		Servers: servers,
		Server: ServerSection{
			Name:          "berth",
			Version:       e.server.Version,
			Transport:     transport,
			TransportMode: ep.Mode,
			URL:           ep.URL,
			UptimeSeconds: time.Since(e.server.StartedAt).Seconds(),
			PID:           e.server.PID,
			StartedAt:     e.server.StartedAt.UTC().Format(time.RFC3339),
		},
		Project: ProjectSection{
			Name:         name,
			Root:         e.root,
			Kind:         e.kind(),
			PraxisOSPath: praxisPath,
			AgentOSPath:  praxisPath,
			Git:          g,
		},
		Capabilities: Capabilities{
			ToolsAvailable:  len(tools),
			RAGEnabled:      cfg.HasGroup(config.GroupRAG),
			WorkflowEnabled: cfg.HasGroup(config.GroupWorkflow) || cfg.HasGroup(config.GroupPOS),
			DualTransport:   ep.Mode == "dual",
			HTTPTransport:   ep.URL != "",
			Tools:           tools,
			ToolGroups:      cfg.MCP.EnabledToolGroups,
			Transports:      e.transports,
			StandardsDirs:   dirs,
		},
		Warnings: cfg.Warnings,
		Missing:  e.missing(ep),
	}
}
