package project

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionURIPrefix begins the resource URI of a workflow session; its id
// follows.
const sessionURIPrefix = "berth://workflow/sessions/"

func sessionURI(id string) string { return sessionURIPrefix + url.PathEscape(id) }

// sessionID is the session a resource URI names; false for any other URI.
func sessionID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, sessionURIPrefix)
	if !ok {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	return id, err == nil && id != ""
}

// sessionResource describes a workflow session as an MCP resource.
func sessionResource(s workflow.SessionSummary) *mcp.Resource {
	desc := fmt.Sprintf("Workflow session: %s on %q, %s, phase %d, %s phases done", s.WorkflowType, s.TargetFile, s.Status, s.CurrentPhase, s.Progress)
	if s.Branch != "" {
		desc += ", started on branch " + s.Branch
	}
	return &mcp.Resource{
		URI:         sessionURI(s.SessionID),
		Name:        "workflow-session-" + s.SessionID,
		Title:       s.WorkflowType + " · " + s.TargetFile,
		Description: desc,
		MIMEType:    "application/json",
	}
}

// followSessions publishes the workflow sessions as resources and follows
// every change to them until ctx ends.
func (c *catalog) followSessions(ctx context.Context) {
	defer close(c.sessionsDone)
	follow(ctx, c.wf.SessionsChanged, c.syncSessions)
}

// syncSessions brings the published session resources in line with the
// store: new sessions are added and deleted ones removed on every server
// (notifications/resources/list_changed), and a session that changed is
// announced to its subscribers (notifications/resources/updated).
func (c *catalog) syncSessions(ctx context.Context) {
	list, err := c.wf.Sessions(ctx, workflow.FilterAll)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("list the workflow sessions for their resources", "err", err)
		}
		return
	}
	now := map[string]workflow.SessionSummary{}
	for _, s := range list.Sessions {
		now[sessionURI(s.SessionID)] = s
	}
	c.mu.Lock()
	var gone, updated []string
	added := map[string]workflow.SessionSummary{}
	for uri, old := range c.sessions {
		s, ok := now[uri]
		switch {
		case !ok:
			gone = append(gone, uri)
		case !sameSummary(old, s):
			updated = append(updated, uri)
			added[uri] = s // its description changed too
		}
	}
	for uri, s := range now {
		if _, ok := c.sessions[uri]; !ok {
			added[uri] = s
		}
	}
	c.sessions = now
	servers := append([]*mcp.Server(nil), c.servers...)
	c.mu.Unlock()

	var res []*mcp.Resource
	for _, s := range added {
		res = append(res, sessionResource(s))
	}
	c.publish(ctx, servers, res, c.readSession, gone, updated)
}

func sameSummary(a, b workflow.SessionSummary) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// readSession answers resources/read of a session with its state, as
// get_workflow_state returns it.
func (c *catalog) readSession(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := sessionID(uri)
	if !ok || !c.hasSession(uri) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	st, err := c.wf.State(ctx, id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode session %s: %w", id, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "application/json", Text: string(data)},
	}}, nil
}

// hasSession reports whether a session resource is published.
func (c *catalog) hasSession(uri string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.sessions[uri]
	return ok
}
