package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolLister answers tools/list straight from a server's own handler,
// below every middleware: the server is the one record of what it serves,
// so no list of names is kept beside it. (A client over an in-memory
// connection would do too, but it sends every tool's schemas through JSON
// both ways: most of a mount's time and memory.)
type toolLister struct {
	s     *mcp.Server
	inner mcp.MethodHandler // the server's method handler, without middleware
}

// newToolLister must be called before any middleware is added to s.
func newToolLister(s *mcp.Server) *toolLister {
	l := &toolLister{s: s}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		l.inner = next
		return next
	})
	return l
}

// names lists the tools the server offers, in its order.
func (l *toolLister) names(ctx context.Context) ([]string, error) {
	tools, err := l.tools(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, nil
}

// tools lists the tools the server offers, in its order.
func (l *toolLister) tools(ctx context.Context) ([]*mcp.Tool, error) {
	// The handler needs a session of the server; this one never hears a
	// word, and what it is told is read and dropped. The server sends a
	// tools/list_changed to every session, this one too while it lists: on
	// an end nobody read, that write would block for good, and with it the
	// session's Close and every later change announced. (Closing the
	// client end instead would end the connection while Connect is still
	// binding the session, which the go-sdk does not survive.)
	ct, st := mcp.NewInMemoryTransports()
	client, err := ct.Connect(ctx)
	if err != nil {
		return nil, err
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			if _, err := client.Read(context.Background()); err != nil {
				return // the session closed its end
			}
		}
	}()
	defer func() { client.Close(); <-drained }()
	ss, err := l.s.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	var tools []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for range 100 {
		res, err := l.inner(ctx, "tools/list", &mcp.ListToolsRequest{Session: ss, Params: params})
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		page, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return nil, fmt.Errorf("tools/list answered %T", res)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		params = &mcp.ListToolsParams{Cursor: page.NextCursor}
	}
	return nil, errors.New("tools/list: more than 100 pages")
}

// Tools lists every tool the project's server offers now, Berth's own and
// the hosted servers' it carries, as a tools/list answers them before any
// middleware (the finder ranks them). The tools are the server's own: do
// not change them.
func (e *Engine) Tools(ctx context.Context) ([]*mcp.Tool, error) { return e.lister.tools(ctx) }

// schemaBytes holds the tool schemas of one server marshaled once, by
// pointer: they never change after registration.
type schemaBytes struct {
	m sync.Map // *jsonschema.Schema -> json.RawMessage
	// group names a tool's group for tools/list's _meta (GroupMetaKey);
	// nil adds none. Set before the server serves.
	group func(tool string) string
}

// marshaled is v as JSON bytes, or v itself if it is not a schema.
func (c *schemaBytes) marshaled(v any) any {
	s, ok := v.(*jsonschema.Schema)
	if !ok || s == nil {
		return v
	}
	if raw, ok := c.m.Load(s); ok {
		return raw
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return v // the SDK marshals it (and reports the error) as before
	}
	got, _ := c.m.LoadOrStore(s, json.RawMessage(raw))
	return got
}

// toolList answers tools/list with each tool's schemas as JSON marshaled
// once: the SDK marshals *jsonschema.Schema through reflection on every
// list, which was most of the IDE's first tools/list (about 3 ms for
// Berth's tools). The answer is the same, with each tool's group in its
// _meta (GroupMetaKey).
func (sb *schemaBytes) toolList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcp.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		out := *lr
		out.Tools = make([]*mcp.Tool, len(lr.Tools))
		for i, t := range lr.Tools {
			c := *t
			c.InputSchema = sb.marshaled(t.InputSchema)
			c.OutputSchema = sb.marshaled(t.OutputSchema)
			if sb.group != nil {
				c.Meta = maps.Clone(t.Meta)
				if c.Meta == nil {
					c.Meta = mcp.Meta{}
				}
				c.Meta[GroupMetaKey] = sb.group(t.Name)
			}
			out.Tools[i] = &c
		}
		return &out, nil
	}
}
