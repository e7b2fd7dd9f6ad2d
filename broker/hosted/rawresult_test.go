package hosted

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolResultPassesWhatTheServerWrote: a result forwarded as bytes
// reaches the caller as the go-sdk would have passed it after decoding it,
// content items, structuredContent, isError and _meta alike, and one with
// members the fast form does not know is decoded by the go-sdk.
func TestToolResultPassesWhatTheServerWrote(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"Echo: ping"}]}`,
		`{"content":[{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5}},{"type":"image","data":"AAEC","mimeType":"image/png"},{"type":"resource_link","uri":"test://static/resource/1","name":"r"},{"type":"resource","resource":{"uri":"test://x","mimeType":"text/plain","text":"t"}}],"isError":true}`,
		`{"content":[],"structuredContent":{"temperature":21.5,"nested":{"a":[1,2]}},"_meta":{"x":"y"}}`,
		`{"content":null}`,
		`{}`,
		`{"content":[{"type":"text","text":"t"}],"resultType":"complete"}`,
	} {
		got, err := toolResult(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var sdk mcp.CallToolResult
		if err := json.Unmarshal([]byte(raw), &sdk); err != nil {
			t.Fatalf("%s: the go-sdk: %v", raw, err)
		}
		if g, w := asJSON(t, got), asJSON(t, &sdk); !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n forwarded as %v\n the go-sdk passes %v", raw, g, w)
		}
	}
	for _, bad := range []string{`[1]`, `{"content":{"type":"text"}}`, `{"isError":"yes"}`, `not json`} {
		if _, err := toolResult(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func asJSON(t *testing.T, r *mcp.CallToolResult) any {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
