package project

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostedServer is one MCP server the broker hosts for the project, as
// get_server_info reports it.
type HostedServer struct {
	Name      string `json:"name"`
	State     string `json:"state"`  // running, stopped, needs approval, failed, ...
	Origin    string `json:"origin"` // project (runs once approved) or user (the broker's config)
	Tools     int    `json:"tools"`  // tools it serves here
	LastError string `json:"last_error,omitempty"`
	Fix       string `json:"fix,omitempty"` // the command that gets it running, when one does
}

// Hosted is what the broker tells the engine about the other MCP servers
// it hosts on the project's server (broker/hosted): their tools count in
// get_server_info's tools_available, and each is listed with its state.
type Hosted interface {
	ToolNames() []string     // hosted tools served now
	Servers() []HostedServer // every declared server, by name
}

// hostedRef holds the engine's Hosted, set once the broker has installed it.
type hostedRef struct {
	mu sync.Mutex
	h  Hosted
}

func (r *hostedRef) get() Hosted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h
}

// SetHosted tells the engine which hosted servers its MCP server carries.
func (e *Engine) SetHosted(h Hosted) {
	e.hosted.mu.Lock()
	e.hosted.h = h
	e.hosted.mu.Unlock()
}

// availableTools are the engine's own tools and the hosted ones, and the
// hosted servers (nil when none is declared).
func (e *Engine) availableTools() ([]string, []HostedServer) {
	tools := e.ToolNames()
	h := e.hosted.get()
	if h == nil {
		return tools, nil
	}
	servers := h.Servers()
	if len(servers) == 0 {
		return tools, nil
	}
	return append(tools, h.ToolNames()...), servers
}

// RelayLog sends a hosted server's notifications/message to the project's
// sessions, each at the level it set with logging/setLevel, as the
// engine's own records go: the logger is the server's name (and the
// server's own logger name after a slash).
func (e *Engine) RelayLog(server string, msg *mcp.LoggingMessageParams) {
	m := *msg
	m.Meta = nil
	m.Logger = server
	if msg.Logger != "" {
		m.Logger = server + "/" + msg.Logger
	}
	e.slog.addMessage(&m)
}
