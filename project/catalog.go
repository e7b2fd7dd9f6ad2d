package project

import (
	"context"
	"log/slog"
	"maps"
	"slices"
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
	root      string
	uriPrefix string           // the root's URI and a slash (resources.go)
	index     *search.Index    // nil: no resources
	wf        *workflow.Engine // nil: no prompts
	log       *slog.Logger

	mu      sync.Mutex           // guards the fields below
	servers []*mcp.Server        // every server built by the engine, which lives as long as it
	files   *fileTable           // the indexed files served as resources, in URI order (resources.go); sibling catalogs may share it (filetables.go)
	prompts map[string]promptDef // published prompts, by name
	// sessions are the published workflow sessions, by URI (sessionresources.go).
	sessions map[string]workflow.SessionSummary

	cancel       context.CancelFunc
	done         chan struct{} // closed when the index loop has returned
	sessionsDone chan struct{} // closed when the sessions loop has returned
}

// newCatalog starts following the index (when there is one).
func newCatalog(root string, ix *search.Index, wf *workflow.Engine, log *slog.Logger) *catalog {
	ctx, cancel := context.WithCancel(context.Background())
	c := &catalog{root: root, uriPrefix: uriPrefix(root), index: ix, wf: wf, log: log, prompts: map[string]promptDef{}, sessions: map[string]workflow.SessionSummary{}, cancel: cancel,
		done: make(chan struct{}), sessionsDone: make(chan struct{})}
	c.prompts = c.loadPrompts(ctx)
	if wf != nil {
		go c.followSessions(ctx)
	} else {
		close(c.sessionsDone)
	}
	if ix == nil {
		close(c.done)
		return c
	}
	go c.followIndex(ctx)
	return c
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
	if len(c.files.entries()) > 0 {
		listChanged(s)
	}
	for _, p := range c.prompts {
		s.AddPrompt(p.prompt, c.startWorkflow)
	}
	for _, sum := range c.sessions {
		s.AddResource(sessionResource(sum), c.readSession)
	}
}

// close stops following the index and waits for the loop to end.
func (c *catalog) close() {
	if c == nil {
		return
	}
	c.cancel()
	<-c.done
	<-c.sessionsDone
}

// withdraw stops the catalog and removes what it published from its
// servers (a config edit replaced it); their sessions are told the lists
// changed.
func (c *catalog) withdraw() {
	if c == nil {
		return
	}
	c.close()
	c.mu.Lock()
	servers := c.servers
	c.servers = nil
	hadFiles := len(c.files.entries()) > 0
	c.files = nil
	uris := slices.Collect(maps.Keys(c.sessions))
	names := slices.Collect(maps.Keys(c.prompts))
	c.mu.Unlock()
	for _, s := range servers {
		if hadFiles {
			listChanged(s)
		}
		if len(uris) > 0 {
			s.RemoveResources(uris...)
		}
		if len(names) > 0 {
			s.RemovePrompts(names...)
		}
	}
}
