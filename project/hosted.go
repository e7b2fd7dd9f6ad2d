package project

import (
	"context"
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
// get_server_info's tools_available, each is listed with its state, and
// subscriptions to their resources are forwarded to them.
type Hosted interface {
	ToolNames() []string     // hosted tools served now
	Servers() []HostedServer // every declared server, by name
	// Subscribe forwards resources/subscribe to the hosted server serving
	// the URI; handled is false when none serves it.
	Subscribe(ctx context.Context, req *mcp.SubscribeRequest) (handled bool, err error)
	// Unsubscribe ends a subscription Subscribe forwarded; handled is
	// false when no hosted server serves the URI.
	Unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) (handled bool)
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

// subscribe answers resources/subscribe: a standard of the project's, else
// a hosted server's resource (the broker may set Hosted after the server
// was built, so it is read at each call), else resource not found.
func (e *Engine) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	err := e.current().catalog.subscribe(ctx, req)
	if err == nil {
		return nil
	}
	if h := e.hosted.get(); h != nil {
		if handled, herr := h.Subscribe(ctx, req); handled {
			return herr
		}
	}
	return err
}

// unsubscribe answers resources/unsubscribe; the SDK forgets the session's
// subscription itself, and a hosted server hears of it once no session
// wants the URI any more.
func (e *Engine) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if h := e.hosted.get(); h != nil {
		h.Unsubscribe(ctx, req)
	}
	return nil
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
