package project

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listTools asks s for its tools as a client would: the server is the one
// record of what it serves, so no list of names is kept beside it.
func listTools(ctx context.Context, s *mcp.Server) ([]string, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "berth-engine", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	return names, nil
}

// schemaBytes holds the tool schemas of one server marshaled once, by
// pointer: they never change after registration.
type schemaBytes struct {
	m sync.Map // *jsonschema.Schema -> json.RawMessage
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
// Berth's tools). The answer's bytes are the same.
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
			out.Tools[i] = &c
		}
		return &out, nil
	}
}
