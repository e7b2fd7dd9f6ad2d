package systest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

const serverInfoCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_server_info","arguments":{}}}`

// rpcMessage is a JSON-RPC answer as a test reads it.
type rpcMessage struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpPost builds a streamable-HTTP POST, with session if not "".
func mcpPost(t *testing.T, url, session, body string) *http.Request {
	t.Helper()
	return brokertest.RPCRequest(t, url, session, []byte(body))
}

// doMCP sends req and returns the status, headers and the first JSON-RPC
// message of the answer (a JSON body or an SSE stream), if any.
func doMCP(t *testing.T, ctx context.Context, req *http.Request) (int, http.Header, *rpcMessage) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
				break
			}
		}
		// Read the stream to its end, as clients do: the broker counts the
		// request in flight (its session busy) until then.
		_, _ = io.Copy(io.Discard, resp.Body)
	} else {
		data, _ = io.ReadAll(resp.Body)
	}
	var msg rpcMessage
	if json.Unmarshal(data, &msg) != nil || (msg.Result == nil && msg.Error == nil) {
		return resp.StatusCode, resp.Header, nil
	}
	return resp.StatusCode, resp.Header, &msg
}

// rawInitialize opens a streamable-HTTP session by hand and returns its id.
func rawInitialize(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	status, h, msg := doMCP(t, ctx, mcpPost(t, url, "", initializeBody))
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" || msg == nil || msg.Result == nil {
		t.Fatalf("initialize: %d session %q %+v", status, sid, msg)
	}
	if status, _, _ := doMCP(t, ctx, mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}
	return sid
}

// callServerInfo calls get_server_info on a raw session and returns the status.
func callServerInfo(t *testing.T, ctx context.Context, url, sid string) (int, *rpcMessage) {
	t.Helper()
	status, _, msg := doMCP(t, ctx, mcpPost(t, url, sid, serverInfoCall))
	return status, msg
}

// TestStreamableHTTPSessionRules walks the Mcp-Session-Id rules of the
// spec by hand and checks that a bad message never costs the session.
func TestStreamableHTTPSessionRules(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "rules", nil)
	url := b.Attach(t, root).URL
	works := func(sid, after string) {
		t.Helper()
		status, msg := callServerInfo(t, ctx, url, sid)
		if status != http.StatusOK || msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), root) {
			t.Fatalf("session after %s: %d %+v", after, status, msg)
		}
	}

	if status, _ := callServerInfo(t, ctx, url, ""); status != http.StatusBadRequest {
		t.Errorf("no Mcp-Session-Id: %d, want 400", status)
	}
	if status, _ := callServerInfo(t, ctx, url, "no-such-session"); status != http.StatusNotFound {
		t.Errorf("unknown Mcp-Session-Id: %d, want 404", status)
	}
	sid := rawInitialize(t, ctx, url)
	works(sid, "initialize")

	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_server_info","arguments":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}}`
	status, _, msg := doMCP(t, ctx, mcpPost(t, url, sid, big))
	if status != http.StatusRequestEntityTooLarge || msg == nil || msg.Error == nil || !strings.Contains(msg.Error.Message, "bytes") {
		t.Errorf("5 MiB body: %d %+v, want 413 with a JSON-RPC error", status, msg)
	}
	works(sid, "a 5 MiB body")

	status, _, msg = doMCP(t, ctx, mcpPost(t, url, sid, `{"jsonrpc":"2.0","id":4,"method":`))
	if msg == nil || msg.Error == nil || msg.Error.Code != -32700 {
		t.Errorf("malformed JSON: %d %+v, want a JSON-RPC parse error (-32700)", status, msg)
	}
	works(sid, "malformed JSON")

	del, _ := http.NewRequest("DELETE", url, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	if status, _, _ := doMCP(t, ctx, del); status/100 != 2 {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _ := callServerInfo(t, ctx, url, sid); status != http.StatusNotFound {
		t.Errorf("a deleted session: %d, want 404", status)
	}
	works(rawInitialize(t, ctx, url), "another was deleted")
}

// TestRawWebSocketExchange speaks MCP over /ws frame by frame: subprotocol,
// handshake, tools/list, tools/call; bad frames are answered and survived.
func TestRawWebSocketExchange(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "rawws", nil)
	port := b.Attach(t, root).Port
	ws, resp, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ws", port), &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	if resp.Header.Get("Sec-WebSocket-Protocol") != "mcp" {
		t.Fatalf("subprotocol %q, want mcp", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	exchange := func(frame string) *rpcMessage {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var msg rpcMessage
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatalf("non-JSON frame %q", data)
		}
		return &msg
	}
	if m := exchange(initializeBody); m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	if m := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); !bytes.Contains(m.Result, []byte(`"get_server_info"`)) {
		t.Fatalf("tools/list: %s", m.Result)
	}
	if m := exchange(`not json`); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("malformed frame: %+v", m)
	}
	if m := exchange(`{"pad":"` + strings.Repeat("x", 5<<20) + `"}`); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("5 MiB frame: %+v", m)
	}
	m := exchange(strings.Replace(serverInfoCall, `"id":2`, `"id":3`, 1))
	if !bytes.Contains(m.Result, []byte(`"transport":"websocket"`)) || !bytes.Contains(m.Result, []byte(root)) {
		t.Fatalf("get_server_info after bad frames: %s %+v", m.Result, m.Error)
	}
}

// TestSessionTimeoutEndsIdleSessionsOnly runs a broker with a short
// session_timeout: an idle /mcp session is closed (404), while sessions
// that hold a connection, a /mcp GET stream, an SSE or a WebSocket one,
// are busy and stay, however silent; a new session still opens.
func TestSessionTimeoutEndsIdleSessionsOnly(t *testing.T) {
	t.Parallel()
	// Long enough that a session is never idle that long while the test
	// sets it up, short enough to wait for.
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--session-timeout", "2s"}})
	ctx := testCtx(t, 60*time.Second)
	resp := b.Attach(t, brokertest.Project(t, "sleepy", nil))
	hostPort := fmt.Sprintf("127.0.0.1:%d", resp.Port)
	idle := rawInitialize(t, ctx, resp.URL)
	holding := rawInitialize(t, ctx, resp.URL)
	openGET(t, ctx, resp.URL, holding)
	streams := map[string]*mcp.ClientSession{
		"sse":       connectMCP(t, ctx, &mcp.SSEClientTransport{Endpoint: "http://" + hostPort + "/sse"}),
		"websocket": connectMCP(t, ctx, &mcpws.ClientTransport{URL: "ws://" + hostPort + "/ws"}),
	}
	// Watched from the control API: a request on it would make it busy.
	brokertest.Eventually(t, "the idle session timed out", func() bool {
		return !slices.ContainsFunc(sessionsOf(t, ctx, b, resp.ID), func(s api.Session) bool { return s.ID == idle })
	})
	if status, _ := callServerInfo(t, ctx, resp.URL, idle); status != http.StatusNotFound {
		t.Fatalf("idle streamable session answers %d, want 404 once timed out", status)
	}
	// The idle one was closed after 2s of silence; the busy ones have been
	// as silent as long.
	for name, s := range streams {
		if info := getServerInfo(t, ctx, s); info.Server.Transport != name {
			t.Errorf("%s session: %+v", name, info)
		}
	}
	if status, _ := callServerInfo(t, ctx, resp.URL, holding); status != http.StatusOK {
		t.Errorf("the /mcp session holding a GET stream: %d, want 200", status)
	}
	if got := getServerInfo(t, ctx, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL})); got.Project.Name != "sleepy" {
		t.Fatalf("new session after time-outs: %+v", got)
	}
}

// TestSSEBadMessagesKeepTheSession speaks the legacy SSE transport by hand:
// an oversized and a malformed POST are refused alone, and the stream and
// its session carry on.
func TestSSEBadMessagesKeepTheSession(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "rawsse", nil)
	base := fmt.Sprintf("http://127.0.0.1:%d", b.Attach(t, root).Port)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	next := func() (event, data string) { // one SSE event; ctx bounds the wait
		t.Helper()
		for {
			line, err := stream.ReadString('\n')
			if err != nil {
				t.Fatalf("SSE stream ended: %v", err)
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "" && data != "":
				return event, data
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data += strings.TrimPrefix(line, "data: ")
			}
		}
	}
	event, endpoint := next()
	if event != "endpoint" {
		t.Fatalf("first SSE event %q %q, want the endpoint", event, endpoint)
	}
	if !strings.HasPrefix(endpoint, "http") {
		endpoint = base + endpoint
	}
	post := func(body string) (int, *rpcMessage) {
		t.Helper()
		status, _, msg := doMCP(t, ctx, mcpPost(t, endpoint, "", body))
		return status, msg
	}
	if status, _ := post(initializeBody); status != http.StatusAccepted {
		t.Fatalf("initialize: %d", status)
	}
	if _, data := next(); !strings.Contains(data, `"result"`) {
		t.Fatalf("initialize answer: %s", data)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if status, msg := post(`{"pad":"` + strings.Repeat("x", 5<<20) + `"}`); status != http.StatusRequestEntityTooLarge || msg == nil || msg.Error == nil {
		t.Errorf("5 MiB POST: %d %+v, want 413 with a JSON-RPC error", status, msg)
	}
	if status, msg := post(`{"jsonrpc":`); status != http.StatusBadRequest || msg == nil || msg.Error == nil || msg.Error.Code != -32700 {
		t.Errorf("malformed POST: %d %+v, want 400 with a JSON-RPC parse error", status, msg)
	}
	if status, _ := post(serverInfoCall); status != http.StatusAccepted {
		t.Fatalf("tools/call after bad POSTs: %d", status)
	}
	if _, data := next(); !strings.Contains(data, `\"transport\":\"sse\"`) && !strings.Contains(data, `"transport":"sse"`) {
		t.Fatalf("get_server_info on the same stream: %s", data)
	}
}
