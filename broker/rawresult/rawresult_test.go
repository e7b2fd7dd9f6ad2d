package rawresult

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBytesOnlyForTheResultKept: the bytes come back for the result kept,
// unchanged, in the context that opened the slot; not without a slot, not
// for another result or one changed since, not when they span lines or
// the result has what they cannot say (a _meta, a structuredContent that
// is not raw JSON).
func TestBytesOnlyForTheResultKept(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":1}}`)
	fresh := func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: json.RawMessage(`{"a":1}`)}
	}
	ctx, slot := With(context.Background())
	res := fresh()
	Keep(ctx, res, raw)
	if got, ok := slot.Bytes(res); !ok || string(got) != string(raw) {
		t.Fatalf("the result kept: %s %v", got, ok)
	}
	if _, ok := slot.Bytes(fresh()); ok {
		t.Error("an equal result that is not the one kept has its bytes")
	}
	res.StructuredContent = json.RawMessage(`{"a":1}`)
	if _, ok := slot.Bytes(res); ok {
		t.Error("a result whose structuredContent changed has its bytes")
	}
	var none *Slot
	if _, ok := none.Bytes(res); ok {
		t.Error("a nil slot has bytes")
	}
	Keep(context.Background(), fresh(), raw) // no slot: nothing to do, no panic
	for name, keep := range map[string]func(*mcp.CallToolResult) json.RawMessage{
		"two lines": func(*mcp.CallToolResult) json.RawMessage { return json.RawMessage("{\"content\":\n[]}") },
		"a _meta":   func(r *mcp.CallToolResult) json.RawMessage { r.Meta = mcp.Meta{"k": "v"}; return raw },
		"decoded structuredContent": func(r *mcp.CallToolResult) json.RawMessage {
			r.StructuredContent = map[string]any{"a": 1}
			return raw
		},
	} {
		ctx, slot := With(context.Background())
		res := fresh()
		Keep(ctx, res, keep(res))
		if _, ok := slot.Bytes(res); ok {
			t.Errorf("%s: kept", name)
		}
	}
}
