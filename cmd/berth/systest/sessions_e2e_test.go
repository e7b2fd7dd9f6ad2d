package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSessionsProject makes a project whose config sets mcp.max_sessions.
func maxSessionsProject(t *testing.T, name string, n int) string {
	return brokertest.Project(t, name, map[string]string{
		filepath.Join(api.ProjectDir, "config.yaml"): fmt.Sprintf("mcp:\n  max_sessions: %d\n", n),
	})
}

// openGET opens the standalone GET stream of session sid and returns once
// the broker has answered it; cancel ctx to close it.
func openGET(t *testing.T, ctx context.Context, url, sid string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	go func() { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
}

// holdCall starts berth_test_hold on session sid (the broker runs with
// brokertest.HoldEnv set to dir): the call stays in flight until release.
func holdCall(t *testing.T, ctx context.Context, url, sid, dir, name string) (release func(), done <-chan *rpcMessage) {
	t.Helper()
	out := make(chan *rpcMessage, 1)
	go func() {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"berth_test_hold","arguments":{"name":%q}}}`, name)
		req := mcpPost(t, url, sid, body)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			out <- nil
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body) // the answer ends the body
		for _, d := range replies(resp.Header.Get("Content-Type"), raw) {
			var msg rpcMessage
			if jsonUnmarshal(string(d), &msg) == nil {
				out <- &msg
				return
			}
		}
		out <- nil
	}()
	return func() {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Error(err)
		}
	}, out
}

// sessionsOf lists project id's MCP sessions.
func sessionsOf(t *testing.T, ctx context.Context, b *brokertest.Broker, id string) []api.Session {
	t.Helper()
	list, err := b.Client.Sessions(ctx, id)
	if err != nil {
		t.Fatalf("sessions of %s: %v", id, err)
	}
	return list
}

// allLive reports whether project id has n sessions, all live.
func allLive(t *testing.T, ctx context.Context, b *brokertest.Broker, id string, n int) bool {
	list := sessionsOf(t, ctx, b, id)
	return len(list) == n && !slices.ContainsFunc(list, func(s api.Session) bool { return s.State != api.SessionLive })
}

// initialize posts an initialize without a session and returns the status,
// the Retry-After header, the new session id and the body.
func initialize(t *testing.T, ctx context.Context, url string) (status int, retry, sid, body string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(mcpPost(t, url, "", initializeBody).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id"), string(raw)
}

// use finishes the handshake of session sid and makes a call on it: a
// session past its handshake may be evicted as soon as it is idle.
func use(t *testing.T, ctx context.Context, url, sid string) {
	t.Helper()
	if status, _, _ := doMCP(t, ctx, mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}
	if status, msg := callServerInfo(t, ctx, url, sid); status != http.StatusOK || msg == nil || msg.Error != nil {
		t.Fatalf("a call on session %s: %d %+v", sid, status, msg)
	}
}

// TestBusySessionsKeepTheirPlacesAndAnIdleOneMakesWay fills a project of
// mcp.max_sessions 3 with a session holding its GET stream, one with a
// tool call in flight and a go-sdk client (which holds a GET stream): a
// fourth is refused with 503 and Retry-After; once the first closes its
// stream (idle), the fourth is admitted, the idle one's next request gets
// 404, and it initializes again and works.
func TestBusySessionsKeepTheirPlacesAndAnIdleOneMakesWay(t *testing.T) {
	t.Parallel()
	hold := t.TempDir()
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{brokertest.HoldEnv + "=" + hold}})
	ctx := testCtx(t, 90*time.Second)
	p := b.Attach(t, maxSessionsProject(t, "three", 3))

	a := rawInitialize(t, ctx, p.URL)
	streamCtx, closeStream := context.WithCancel(ctx)
	defer closeStream()
	openGET(t, streamCtx, p.URL, a)
	bs := rawInitialize(t, ctx, p.URL)
	release, held := holdCall(t, ctx, p.URL, bs, hold, "b")
	c := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, MaxRetries: -1})
	brokertest.Eventually(t, "three live sessions (a GET stream, a call in flight, a go-sdk client)", func() bool {
		return allLive(t, ctx, b, p.ID, 3)
	})

	status, retry, _, body := initialize(t, ctx, p.URL)
	if status != http.StatusServiceUnavailable || retry != "1" || api.ParseError(status, []byte(body)).Code != api.CodeBusy || !strings.Contains(body, "mcp.max_sessions") {
		t.Fatalf("a fourth session with three busy: %d Retry-After %q %s", status, retry, body)
	}

	closeStream() // a is idle now
	var d string
	brokertest.Eventually(t, "the fourth session admitted once one is idle", func() bool {
		status, _, d, _ = initialize(t, ctx, p.URL)
		return status == http.StatusOK && d != ""
	})
	if status, _ := callServerInfo(t, ctx, p.URL, a); status != http.StatusNotFound {
		t.Fatalf("the evicted session's next request: %d, want 404", status)
	}
	use(t, ctx, p.URL, d)
	// a initializes again: d is idle now, so it makes way in turn.
	again := rawInitialize(t, ctx, p.URL)
	if status, msg := callServerInfo(t, ctx, p.URL, again); status != http.StatusOK || msg == nil || msg.Error != nil {
		t.Fatalf("the evicted client, initialized again: %d %+v", status, msg)
	}
	getServerInfo(t, ctx, c) // the busy ones never noticed
	release()
	if msg := <-held; msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), "released") {
		t.Fatalf("the call held through it all: %+v", msg)
	}

	fams := scrape(t, ctx, b)
	for name, min := range map[string]float64{"berth_session_refusals_total": 1, "berth_session_evictions_total": 2} {
		if v, ok := metricValue(fams, name, map[string]string{"project": p.ID}); !ok || v < min {
			t.Errorf("%s{project=%q} = %v (present %v), want at least %v", name, p.ID, v, ok, min)
		}
	}
}

// TestSSEAndWebSocketSessionsFollowTheSameRule: an SSE and a WebSocket
// session are busy for as long as they are connected, silent or not, so a
// project of two refuses a third at every door; a closed connection frees
// its place; and a newcomer on a stream evicts an idle /mcp session.
func TestSSEAndWebSocketSessionsFollowTheSameRule(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	p := b.Attach(t, maxSessionsProject(t, "streams", 2))
	hostPort := fmt.Sprintf("127.0.0.1:%d", p.Port)
	sse := connectMCP(t, ctx, &mcp.SSEClientTransport{Endpoint: "http://" + hostPort + "/sse"})
	ws := connectMCP(t, ctx, &mcpws.ClientTransport{URL: "ws://" + hostPort + "/ws"})
	brokertest.Eventually(t, "two live stream sessions", func() bool { return allLive(t, ctx, b, p.ID, 2) })

	if status, retry, _, body := initialize(t, ctx, p.URL); status != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("/mcp with two silent stream sessions: %d Retry-After %q %s", status, retry, body)
	}
	sseGet, _ := http.NewRequestWithContext(ctx, "GET", "http://"+hostPort+"/sse", nil)
	resp, err := http.DefaultClient.Do(sseGet)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/sse with two silent stream sessions: %d", resp.StatusCode)
	}

	ws.Close() // its connection, and so its session, ends
	var idle string
	brokertest.Eventually(t, "a /mcp session admitted once the WebSocket closed", func() bool {
		status, _, sid, _ := initialize(t, ctx, p.URL)
		idle = sid
		return status == http.StatusOK
	})
	use(t, ctx, p.URL, idle)
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "ws2", Version: "1"}, nil).Connect(ctx, &mcpws.ClientTransport{URL: "ws://" + hostPort + "/ws"}, nil); err != nil {
		t.Fatalf("a WebSocket newcomer with an idle /mcp session in the project: %v", err)
	}
	if status, _ := callServerInfo(t, ctx, p.URL, idle); status != http.StatusNotFound {
		t.Fatalf("the /mcp session the WebSocket evicted: %d, want 404", status)
	}
	getServerInfo(t, ctx, sse)
}

// TestIDESessionIsNeverEvicted runs an IDE session through berth-shim on a
// project of mcp.max_sessions 1 while 25 HTTP sessions come and go (none
// sends DELETE): every one is admitted, and the IDE's session is the same
// one, working, at the end.
func TestIDESessionIsNeverEvicted(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 90*time.Second)
	root := maxSessionsProject(t, "ide", 1)
	p := b.Attach(t, root)
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	ideID := func() string {
		for _, s := range sessionsOf(t, ctx, b, p.ID) {
			if s.Transport == "stdio" {
				return s.ID
			}
		}
		return ""
	}
	first := ideID()
	if first == "" {
		t.Fatal("the IDE's session is not listed")
	}
	for i := range 25 {
		sid := rawInitialize(t, ctx, p.URL)
		if status, msg := callServerInfo(t, ctx, p.URL, sid); status != http.StatusOK || msg == nil || msg.Error != nil {
			t.Fatalf("HTTP session %d: %d %+v", i, status, msg)
		}
	}
	if info := getServerInfo(t, ctx, ide); info.Server.Transport != "stdio" {
		t.Fatalf("the IDE session after 25 HTTP sessions: %+v", info)
	}
	if got := ideID(); got != first {
		t.Fatalf("the IDE's session changed from %s to %s", first, got)
	}
	if v, _ := metricValue(scrape(t, ctx, b), "berth_session_evictions_total", map[string]string{"project": p.ID}); v != 24 {
		t.Errorf("%v evictions, want 24 (each HTTP session made way for the next)", v)
	}
}

// TestClientsListsAndClosesSessions: `berth clients` lists a project's
// sessions with their client, and --close ends a live HTTP session, whose
// next request gets 404.
func TestClientsListsAndClosesSessions(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "clients", nil)
	p := b.Attach(t, root)
	sid := rawInitialize(t, ctx, p.URL)
	cs := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, MaxRetries: -1})
	brokertest.Eventually(t, "the go-sdk client's GET stream open", func() bool {
		return slices.ContainsFunc(sessionsOf(t, ctx, b, p.ID), func(s api.Session) bool { return s.Client == "berth-test" && s.State == api.SessionLive })
	})
	out, code := berthCmd(t, b.Home, "clients", "--project", root)
	if code != 0 {
		t.Fatalf("berth clients: %d %s", code, out)
	}
	for _, want := range []string{"ID", "TRANSPORT", "CLIENT", "STATE", sid, "raw 1", "idle", "berth-test 1", "live", "http"} {
		if !strings.Contains(out, want) {
			t.Errorf("berth clients lacks %q:\n%s", want, out)
		}
	}
	out, code = berthCmd(t, b.Home, "clients", "--json")
	var all []struct {
		Project  string        `json:"project"`
		Sessions []api.Session `json:"sessions"`
	}
	if code != 0 || jsonUnmarshal(out, &all) != nil || len(all) != 1 || all[0].Project != p.ID || len(all[0].Sessions) != 2 {
		t.Fatalf("berth clients --json: %d %s", code, out)
	}

	if out, code := berthCmd(t, b.Home, "clients", "--close", sid); code != 0 || !strings.Contains(out, "closed") {
		t.Fatalf("berth clients --close: %d %s", code, out)
	}
	if status, _ := callServerInfo(t, ctx, p.URL, sid); status != http.StatusNotFound {
		t.Fatalf("a closed session's next request: %d, want 404", status)
	}
	getServerInfo(t, ctx, cs) // the other one carries on
	if out, code := berthCmd(t, b.Home, "clients", "--close", sid); code != 1 || !strings.Contains(out, "no MCP session "+sid) {
		t.Fatalf("closing it again: %d %s", code, out)
	}
}

// TestHTTPSessionSurvivesKill9 kills the broker with -9 under an HTTP
// session: the broker started again (same home and ports, the project
// pinned) answers the same session id, as the same client; a session ended
// with DELETE before a restart never comes back.
func TestHTTPSessionSurvivesKill9(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "survivor", nil)
	if out, code := berthCmd(t, home, "attach", root); code != 0 {
		t.Fatalf("berth attach: %d %s", code, out)
	}
	p, err := b.Client.Project(ctx, api.ProjectID(root))
	if err != nil {
		t.Fatal(err)
	}
	sid := rawInitialize(t, ctx, p.URL)
	ended := rawInitialize(t, ctx, p.URL)
	if status, _ := callServerInfo(t, ctx, p.URL, sid); status != http.StatusOK {
		t.Fatalf("before the kill: %d", status)
	}
	del, _ := http.NewRequest("DELETE", p.URL, nil)
	del.Header.Set("Mcp-Session-Id", ended)
	if status, _, _ := doMCP(t, ctx, del); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", status)
	}

	ports := []string{"--ports-start", fmt.Sprint(b.Start), "--ports-end", fmt.Sprint(b.End)}
	restart := func() *brokertest.Broker {
		b.Kill(t)
		nb := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: ports})
		var q api.Project
		var err error
		if !brokertest.Poll(brokertest.WaitLimit, func() bool {
			q, err = nb.Client.Project(ctx, p.ID)
			return err == nil && q.Port == p.Port
		}) {
			t.Fatalf("the pinned project not served again on port %d: %+v %v\n%s", p.Port, q, err, nb.Stderr())
		}
		return nb
	}
	b = restart()
	status, msg := callServerInfo(t, ctx, p.URL, sid)
	if status != http.StatusOK || msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), root) {
		t.Fatalf("the session after kill -9 and restart: %d %+v", status, msg)
	}
	list := sessionsOf(t, ctx, b, p.ID)
	if len(list) != 1 || list[0].ID != sid || list[0].Client != "raw" {
		t.Fatalf("sessions after the restart: %+v, want %s of client raw", list, sid)
	}
	if status, _ := callServerInfo(t, ctx, p.URL, ended); status != http.StatusNotFound {
		t.Fatalf("a session DELETEd before the kill: %d, want 404", status)
	}
	if v, _ := metricValue(scrape(t, ctx, b), "berth_session_restores_total", map[string]string{"project": p.ID}); v != 1 {
		t.Errorf("%v restores counted, want 1", v)
	}

	// Ended with `berth clients --close`, it stays ended across a restart.
	if out, code := berthCmd(t, home, "clients", "--close", sid); code != 0 {
		t.Fatalf("berth clients --close: %d %s", code, out)
	}
	b = restart()
	if status, _ := callServerInfo(t, ctx, p.URL, sid); status != http.StatusNotFound {
		t.Fatalf("a closed session after a restart: %d, want 404", status)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
