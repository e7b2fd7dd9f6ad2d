package project

import (
	"context"
	"log/slog"
	"sync"

	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalog publishes a project's standards as MCP resources and its
// workflows as prompts on every server the engine builds, and keeps them
// current: one goroutine follows the index (resources come and go, a
// subscribed resource that changes is announced), and the engine calls
// workflowsChanged after it reloads the workflow definitions.
//
// A nil *catalog publishes nothing; its methods may be called on it.
type catalog struct {
	root  string
	index *search.Index    // nil: no resources
	wf    *workflow.Engine // nil: no prompts
	log   *slog.Logger

	mu      sync.Mutex             // guards the fields below
	servers []*mcp.Server          // every server built by the engine, which lives as long as it
	files   map[string]search.File // published resources, by URI
	prompts map[string]promptDef   // published prompts, by name

	cancel context.CancelFunc
	done   chan struct{} // closed when the index loop has returned
}

// newCatalog starts following the index (when there is one).
func newCatalog(root string, ix *search.Index, wf *workflow.Engine, log *slog.Logger) *catalog {
	ctx, cancel := context.WithCancel(context.Background())
	c := &catalog{root: root, index: ix, wf: wf, log: log, files: map[string]search.File{},
		prompts: map[string]promptDef{}, cancel: cancel, done: make(chan struct{})}
	c.prompts = c.loadPrompts(ctx)
	if ix == nil {
		close(c.done)
		return c
	}
	go c.followIndex(ctx)
	return c
}

// configure sets the server options resources and prompts need: the
// subscription handlers, and capabilities advertised from the start (the
// SDK infers them only once a resource or prompt exists, and a client
// learns them at initialize).
func (c *catalog) configure(opts *mcp.ServerOptions) {
	if c == nil || (c.index == nil && c.wf == nil) {
		return
	}
	if opts.Capabilities == nil {
		opts.Capabilities = &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}} // the SDK's default
	}
	if c.index != nil {
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
		opts.SubscribeHandler = c.subscribe
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	if c.wf != nil {
		opts.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
}

// serve publishes the current resources and prompts on s and keeps them
// current from now on.
func (c *catalog) serve(s *mcp.Server) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.servers = append(c.servers, s)
	for uri, f := range c.files {
		s.AddResource(c.resource(uri, f), c.read)
	}
	for _, p := range c.prompts {
		s.AddPrompt(p.prompt, c.startWorkflow)
	}
}

// close stops following the index and waits for the loop to end.
func (c *catalog) close() {
	if c == nil {
		return
	}
	c.cancel()
	<-c.done
}
