package streamable

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/rawresult"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asWritten is a result as a server may write it: its members in its own
// order, with spaces and a false isError, which the go-sdk would encode
// otherwise.
const asWritten = `{"isError":false, "content":[{"text":"as written","type":"text"}]}`

// TestAKeptResultLeavesAsWritten: a tool that keeps its result's bytes
// (rawresult.Keep, as a forwarded call does) is answered with those bytes;
// a result a middleware replaced or changed afterwards is encoded from
// what it holds, as is every result over the go-sdk's own path.
func TestAKeptResultLeavesAsWritten(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	kept := func(ctx context.Context) *mcp.CallToolResult {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "as written"}}}
		rawresult.Keep(ctx, res, json.RawMessage(asWritten))
		return res
	}
	for _, name := range []string{"kept", "replaced", "changed", "added"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return kept(ctx), nil
		})
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			p, _ := req.GetParams().(*mcp.CallToolParamsRaw)
			switch r, _ := res.(*mcp.CallToolResult); {
			case p == nil || r == nil:
			case p.Name == "replaced":
				res = &mcp.CallToolResult{Content: r.Content}
			case p.Name == "changed":
				r.IsError = true
			case p.Name == "added":
				r.Content = append(r.Content, &mcp.TextContent{Text: "more"})
			}
			return res, err
		}
	})
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	_, sid, _ := post(t, url, "", initBody)
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct{ tool, want string }{
		{"kept", `{"jsonrpc":"2.0","id":5,"result":` + asWritten + `}`},
		{"replaced", `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"as written"}]}}`},
		{"changed", `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"as written"}],"isError":true}}`},
		{"added", `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"as written"},{"type":"text","text":"more"}]}}`},
	} {
		resp := rawPost(t, context.Background(), url, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":{}}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.tool, body, tc.want)
		}
	}
	// Over the go-sdk's own path (a batch of one) the tool has no slot.
	resp := rawPost(t, context.Background(), url, sid, `[{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"kept","arguments":{}}}]`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"as written"}]}}`; !strings.Contains(string(body), want) {
		t.Errorf("through the go-sdk: %s, want %s in it", body, want)
	}
}

// TestAnswerWithEncodesAsTheGoSDK: an answer written around a result's
// bytes is the one jsonrpc.EncodeMessage writes, whatever the id.
func TestAnswerWithEncodesAsTheGoSDK(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"<&>"}]}`)
	for _, raw := range []any{5.0, -3.0, float64(1 << 53), "a<&>\"b\\", "\u00e9\u2028", ""} {
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
		if err != nil {
			t.Fatal(err)
		}
		if got := answerWith(id, result); string(got) != string(want) {
			t.Errorf("id %#v:\n got  %s\n want %s", raw, got, want)
		}
	}
}
