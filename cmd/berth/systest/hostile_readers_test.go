//go:build linux

package systest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/budgettest"
	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The flood a hosted server sends while a session stops reading: as many
// resource updates as log messages of floodPad bytes, more than a
// loopback socket's buffers hold.
const (
	notificationFlood = 2_000
	floodPad          = 8 << 10
)

// Sessions that stop reading while a hosted server floods them with
// resource updates and log messages: the broker drops what they cannot
// take (or cuts them off) at a bounded cost, and `berth clients` says so
// for a session that lives on.
var _ = addHostile(
	slowReader("a GET stream on /mcp that is never read", listenStreamable),
	slowReader("a legacy SSE stream that stops being read", listenSSE),
	slowReader("a WebSocket that stops being read", listenWebSocket),
)

// listener opens a session on the project's port that subscribes to the
// flood server's updates and sets its log level, then stops reading; it
// returns the session's id as `berth clients` shows it ("" when the
// broker names it) and a func that closes it.
type listener func(ctx context.Context, t *testing.T, port int) (sid string, closeIt func())

// slowReader is an entry whose project runs the flood server: a session
// opened by listen stops reading, and another session makes the server
// send notificationFlood updates and log messages.
func slowReader(name string, listen listener) hostileCase {
	var port int
	var closeIt func()
	var sid string
	return hostileCase{
		name:   name,
		budget: budgettest.Request,
		prepare: func(t *testing.T, p *hostileProject) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p.WriteFile(t, ".praxis-os/config.yaml", "servers:\n  flood:\n    command: "+floodServer(t)+"\n    start: eager\n")
			port = p.MustAttach(ctx, t).Port
			if _, err := p.b.Client.ApproveServers(ctx, api.ApproveRequest{Root: p.Root}); err != nil {
				t.Fatal(err)
			}
			if !brokertest.Poll(30*time.Second, func() bool {
				list, err := p.b.Client.Servers(ctx, p.Root)
				return err == nil && len(list.Projects) == 1 && len(list.Projects[0].Servers) == 1 && list.Projects[0].Servers[0].State == api.ServerRunning
			}) {
				t.Fatal("the flood server is not running after 30s")
			}
			sid, closeIt = listen(ctx, t, port)
			t.Cleanup(closeIt)
		},
		run: func(ctx context.Context, t *testing.T, p *hostileProject) {
			caller := p.Session(ctx, t, port)
			res, err := caller.CallTool(ctx, &mcp.CallToolParams{Name: "flood__flood", Arguments: map[string]any{"count": notificationFlood, "pad": floodPad}})
			if err != nil || res.IsError {
				t.Fatalf("flood: %v %+v", err, res)
			}
			var slow api.Session
			if !brokertest.Poll(30*time.Second, func() bool {
				list, err := p.b.Client.Sessions(ctx, p.ID)
				if err != nil {
					return false
				}
				for _, s := range list {
					if s.ID != caller.ID() && (sid == "" || s.ID == sid) && (s.Dropped > 0 || s.StreamsCut > 0) {
						slow = s
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no session says it lost notifications: %+v", slow)
			}
			t.Logf("the slow session: %d notifications dropped, %d streams cut", slow.Dropped, slow.StreamsCut)
			closeIt()
		},
	}
}

// listenStreamable initializes a streamable HTTP session, subscribes and
// opens its GET stream, which it never reads.
func listenStreamable(ctx context.Context, t *testing.T, port int) (string, func()) {
	s := openRawSession(t, port, "2025-06-18")
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"flood://updates"}}`,
	} {
		if a, err := s.Post(body); err != nil || !strings.Contains(string(a.Body), `"result"`) {
			t.Fatalf("%s: %v %+v", body, err, a)
		}
	}
	conn := dialPort(t, port)
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n", port, s.sid)
	return s.sid, func() { conn.Close() }
}

// listenSSE opens a legacy SSE session, reads its endpoint event, posts
// initialize, the log level and the subscription, and stops reading.
func listenSSE(ctx context.Context, t *testing.T, port int) (string, func()) {
	conn := dialPort(t, port)
	fmt.Fprintf(conn, "GET /sse HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n\r\n", port)
	r := bufio.NewReader(conn)
	var endpoint string
	for endpoint == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the SSE stream ended before its endpoint: %v", err)
		}
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && strings.Contains(d, "sessionid=") {
			endpoint = d
		}
	}
	c := &http.Client{Timeout: time.Minute}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, endpoint)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"slow-sse","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"flood://updates"}}`,
	} {
		if a, err := postMCP(c, url, "", "", body); err != nil || a.StatusCode >= 300 {
			t.Fatalf("%s: %v %+v", body, err, a)
		}
	}
	return "", func() { conn.Close() }
}

// listenWebSocket opens a WebSocket session, initializes, sets its log
// level and subscribes, reading the answers, and then reads no more.
func listenWebSocket(ctx context.Context, t *testing.T, port int) (string, func()) {
	ws, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ws", port), &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"slow-ws","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"flood://updates"}}`,
	} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			continue // a notification: no answer
		}
		if _, msg, err := ws.Read(ctx); err != nil || !strings.Contains(string(msg), `"result"`) {
			t.Fatalf("%s: %v %s", body, err, msg)
		}
	}
	return "", func() { ws.CloseNow() }
}

// dialPort opens a TCP connection to a project port, closed at the end.
func dialPort(t *testing.T, port int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
