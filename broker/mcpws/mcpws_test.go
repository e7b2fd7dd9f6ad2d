package mcpws

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func newServer(t *testing.T) (*httptest.Server, *mcp.Server) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, struct{ Text string }, error) {
		return nil, in, nil
	})
	hs := httptest.NewServer(Handler(s, slog.New(slog.NewTextHandler(io.Discard, nil)), nil))
	t.Cleanup(hs.Close)
	return hs, s
}

func TestClientTransportRoundTrip(t *testing.T) {
	hs, _ := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"Text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if string(raw) != `{"Text":"hi"}` {
		t.Fatalf("echo result %s", raw)
	}
}

// dialRaw opens a WebSocket to hs as a raw client, closed when the test ends.
func dialRaw(t *testing.T, ctx context.Context, hs *httptest.Server) (*websocket.Conn, *http.Response) {
	t.Helper()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws, resp
}

// sendText writes s to ws as one text frame.
func sendText(t *testing.T, ctx context.Context, ws *websocket.Conn, s string) {
	t.Helper()
	if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedFrameGetsParseErrorAndSessionSurvives(t *testing.T) {
	hs, _ := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp := dialRaw(t, ctx, hs)
	if resp.Header.Get("Sec-WebSocket-Protocol") != Subprotocol {
		t.Fatalf("subprotocol %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	send := func(s string) { sendText(t, ctx, ws, s) }
	read := func() map[string]any {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("server sent non-JSON %q", data)
		}
		return m
	}
	send(`{"this is": "not json-rpc"`)
	if m := read(); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32700) {
		t.Fatalf("malformed frame answered with %v", m)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := read(); m["result"] == nil {
		t.Fatalf("initialize after a bad frame: %v", m)
	}
}

// TestProgressLeavesBeforeTheAnswer: a tool's progress notifications and
// its answer leave the session's outbox in the order the server sent
// them, call after call: a raw reader sees every notification, in order,
// before the answer.
func TestProgressLeavesBeforeTheAnswer(t *testing.T) {
	const steps = 5
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= steps; i++ {
			p := &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: steps}
			if err := req.Session.NotifyProgress(ctx, p); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	hs := httptest.NewServer(Handler(s, slog.New(slog.NewTextHandler(io.Discard, nil)), nil))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _ := dialRaw(t, ctx, hs)
	send := func(s string) { sendText(t, ctx, ws, s) }
	type message struct {
		ID     *int `json:"id"`
		Method string
		Params struct{ Progress float64 }
	}
	read := func() message {
		t.Helper()
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("server sent %q: %v", data, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := read(); m.ID == nil || *m.ID != 0 {
		t.Fatalf("initialize answered with %+v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for call := 1; call <= 50; call++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"c%d"}}}`, call, call))
		var heard []float64
		for m := read(); m.ID == nil; m = read() {
			if m.Method == "notifications/progress" {
				heard = append(heard, m.Params.Progress)
			}
		}
		if want := []float64{1, 2, 3, 4, 5}; !slices.Equal(heard, want) {
			t.Fatalf("call %d: progress before the answer %v, want %v", call, heard, want)
		}
	}
}
