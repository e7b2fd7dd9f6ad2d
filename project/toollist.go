package project

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaJSON holds each tool schema marshaled once per process, by pointer:
// the schemas are shared by every server (see schemaCache) and never change
// after registration.
var schemaJSON sync.Map // *jsonschema.Schema -> json.RawMessage

// marshaledSchema is s as JSON bytes, or s itself if it is not a schema.
func marshaledSchema(v any) any {
	s, ok := v.(*jsonschema.Schema)
	if !ok || s == nil {
		return v
	}
	if raw, ok := schemaJSON.Load(s); ok {
		return raw
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return v // the SDK marshals it (and reports the error) as before
	}
	got, _ := schemaJSON.LoadOrStore(s, json.RawMessage(raw))
	return got
}

// fastToolList answers tools/list with each tool's schemas as JSON marshaled
// once: the SDK marshals *jsonschema.Schema through reflection on every
// list, which was most of the IDE's first tools/list (about 3 ms for
// Berth's tools). The answer's bytes are the same.
func fastToolList(next mcp.MethodHandler) mcp.MethodHandler {
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
			c.InputSchema = marshaledSchema(t.InputSchema)
			c.OutputSchema = marshaledSchema(t.OutputSchema)
			out.Tools[i] = &c
		}
		return &out, nil
	}
}
