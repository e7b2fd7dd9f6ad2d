package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestInFlightRequestGetsAnErrorAndTheSessionCarriesOn runs the forwarder
// against a broker stand-in whose first connection dies while a request is
// in flight: that request is answered with a JSON-RPC error (and one the
// IDE cancelled before is not answered at all: the MCP spec asks for no
// answer to a cancelled request), the initialize is replayed on the second
// connection, and the next request succeeds there.
func TestInFlightRequestGetsAnErrorAndTheSessionCarriesOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var conns atomic.Int32
	replayed := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		n := conns.Add(1)
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(data, &req)
			switch {
			case req.Method == "initialize":
				if n == 2 {
					replayed <- string(data)
				}
			case req.Method == "tools/call" && n == 1:
				continue // left unanswered
			case req.Method == "notifications/cancelled" && n == 1:
				return // the broker dies with a request in flight and one cancelled
			case req.ID == nil:
				continue // a notification
			}
			reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"conn":%d}}`, req.ID, n)
			if err := ws.Write(ctx, websocket.MessageText, []byte(reply)); err != nil {
				return
			}
		}
	}))
	defer srv.Close()

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	f := &forwarder{
		dial: func(ctx context.Context) (*websocket.Conn, error) {
			c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{Subprotocols: []string{"mcp"}})
			return c, err
		},
		in: stdinR, out: stdoutW, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	done := make(chan error, 1)
	go func() { done <- f.run(ctx); stdoutW.Close() }()
	out := bufio.NewReader(stdoutR)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdinW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("stdout ended: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		return m
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ide","version":"1"}}}`
	send(initialize)
	if m := recv(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
	send(`{"jsonrpc":"2.0","id":"c-5","method":"tools/call","params":{"name":"y"}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-5","reason":"the user stopped it"}}`)
	m := recv()
	if e, _ := m["error"].(map[string]any); m["id"] != float64(2) || e == nil || e["code"] != float64(-32603) {
		t.Fatalf("the request in flight when the broker died: %v, want a -32603 error", m)
	}
	select {
	case got := <-replayed:
		if got != initialize {
			t.Errorf("replayed initialize %s, want the IDE's %s", got, initialize)
		}
	case <-ctx.Done():
		t.Fatal("initialize was not replayed on the new connection")
	}
	// An answer to the cancelled c-5 would come before this one.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if m := recv(); m["id"] != float64(3) || fmt.Sprint(m["result"]) != "map[conn:2]" {
		t.Fatalf("the next request: %v, want an answer from the second connection", m)
	}
	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatalf("run after stdin closed: %v", err)
	}
}
