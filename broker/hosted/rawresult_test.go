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
	for _, tc := range []struct {
		raw  string
		same bool // the answer may carry the server's bytes as they are
	}{
		{`{"content":[{"type":"text","text":"Echo: ping"}]}`, true},
		{`{"content":[{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5}},{"type":"image","data":"AAEC","mimeType":"image/png"},{"type":"resource_link","uri":"test://static/resource/1","name":"r"},{"type":"resource","resource":{"uri":"test://x","mimeType":"text/plain","text":"t"}}],"isError":true}`, true},
		{`{"content":[],"structuredContent":{"temperature":21.5,"nested":{"a":[1,2]}},"isError":false}`, true},
		{`{"content":[],"structuredContent":{"temperature":21.5,"nested":{"a":[1,2]}},"_meta":{"x":"y"}}`, false},
		{`{"content":[],"structuredContent":null}`, false},
		{`{"content":[],"isError":null}`, false},
		{`{"content":null}`, false},
		{`{}`, false},
		{`{"content":[{"type":"text","text":"t"}],"resultType":"complete"}`, false},
	} {
		got, same, err := toolResult(json.RawMessage(tc.raw))
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		var sdk mcp.CallToolResult
		if err := json.Unmarshal([]byte(tc.raw), &sdk); err != nil {
			t.Fatalf("%s: the go-sdk: %v", tc.raw, err)
		}
		if g, w := asJSON(t, got), asJSON(t, &sdk); !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n forwarded as %v\n the go-sdk passes %v", tc.raw, g, w)
		}
		if same != tc.same {
			t.Errorf("%s: passes as it is %v, want %v", tc.raw, same, tc.same)
		}
		if !same {
			continue
		}
		// As it is, it reads as what the go-sdk would have sent.
		var passed mcp.CallToolResult
		if err := json.Unmarshal([]byte(tc.raw), &passed); err != nil {
			t.Fatal(err)
		}
		if g, w := asJSON(t, &passed), asJSON(t, got); !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n as it is reads %v\n encoded it reads %v", tc.raw, g, w)
		}
	}
	for _, bad := range []string{`[1]`, `{"content":{"type":"text"}}`, `{"isError":"yes"}`, `not json`} {
		if _, _, err := toolResult(json.RawMessage(bad)); err == nil {
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
