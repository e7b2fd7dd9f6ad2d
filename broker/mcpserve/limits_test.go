package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/streamable"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatedServer is an MCP server under limits l whose "wait" tool blocks
// until release is closed and reports each call's start on started. Its
// sessions are entered in l's book, as a mount's are.
func gatedServer(t *testing.T, l *Limits) (s *mcp.Server, started chan struct{}, release chan struct{}) {
	t.Helper()
	s = mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
	started, release = make(chan struct{}, 64), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "quick"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	s.AddResource(&mcp.Resource{URI: "berth://quick", Name: "quick"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "berth://quick", Text: "q"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "quick"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "q"}}}}, nil
	})
	s.AddReceivingMiddleware(l.book.Middleware, l.Middleware)
	return s, started, release
}

// testLimits are limits with their own book.
func testLimits(project string, maxSessions, maxToolCalls int, timeout time.Duration) *Limits {
	return NewLimits(project, maxSessions, maxToolCalls, timeout, NewBook(slog.New(slog.DiscardHandler)))
}

// connectInMemory connects a client to s as a session of the transport named.
func connectInMemory(t *testing.T, ctx context.Context, s *mcp.Server, name string) (*mcp.ClientSession, error) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(withTransport(ctx, named(t, name)), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func busyCode(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == CodeBusy
}

func TestToolCallsPastTheLimitAreRefusedOnTheOpenSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	busy := testLimits("busy", 0, 2, 0)
	s, started, release := gatedServer(t, busy)
	cs, err := connectInMemory(t, ctx, s, TransportSSE)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"}); err != nil {
				t.Errorf("call within the limit: %v", err)
			}
		}()
	}
	<-started
	<-started
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"})
	if !busyCode(err) {
		t.Fatalf("third concurrent call: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	// Reading a resource and getting a prompt count too.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "berth://quick"}); !busyCode(err) {
		t.Fatalf("resources/read past the limit: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "quick"}); !busyCode(err) {
		t.Fatalf("prompts/get past the limit: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list is not counted: %v", err)
	}

	// Another project's limits are its own.
	other, _, _ := gatedServer(t, testLimits("other", 0, 2, 0))
	ocs, err := connectInMemory(t, ctx, other, TransportSSE)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatalf("another project while this one is full: %v", err)
	}

	close(release)
	wg.Wait()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatalf("the same session after the calls ended: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "berth://quick"}); err != nil {
		t.Fatalf("resources/read after the calls ended: %v", err)
	}
}

// TestBatchRequestsTakeTheirTurn: every request of a JSON-RPC batch counts
// against mcp.max_tool_calls, and those past it wait for a place instead
// of being refused (a batch's requests all arrive at once), while a single
// request is refused as before.
func TestBatchRequestsTakeTheirTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("batch", 0, 2, 0)
	s, started, release := gatedServer(t, l)
	h := streamable.New(s, streamable.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Shutdown() })
	post := func(sid, body string) (*http.Response, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answers := make(chan string, 1)
	go func() {
		_, body := post(sid, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait"}},`+
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait"}},`+
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`)
		answers <- body
	}()
	<-started
	<-started
	if _, body := post(sid, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"berth://quick"}}`); !strings.Contains(body, fmt.Sprint(CodeBusy)) {
		t.Fatalf("a single request while the batch holds every place: %s", body)
	}
	close(release)
	var body string
	select {
	case body = <-answers:
	case <-ctx.Done():
		t.Fatal("the batch was not answered")
	}
	if strings.Contains(body, `"error"`) || strings.Count(body, `"result"`) != 3 {
		t.Fatalf("the batch's answers: %s", body)
	}
}

// TestSessionsPastTheLimitAreRefusedAtInitialize uses stream sessions,
// busy for as long as they are connected: the go-sdk client opens an
// in-memory session with server/discover, which takes a place on a stream
// (on /mcp it would get a throwaway session).
func TestSessionsPastTheLimitAreRefusedAtInitialize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("capped", 2, 0, 0)
	s, _, _ := gatedServer(t, l)
	first, err := connectInMemory(t, ctx, s, TransportSSE)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectInMemory(t, ctx, s, TransportWS); err != nil {
		t.Fatal(err)
	}
	if l.room(ctx) == nil {
		t.Fatal("two busy sessions of two leave room")
	}
	if _, err := connectInMemory(t, ctx, s, TransportSSE); !busyCode(err) {
		t.Fatalf("third session: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	// IDE sessions (not network) are never refused.
	if _, err := connectInMemory(t, ctx, s, TransportStdio); err != nil {
		t.Fatalf("IDE session refused: %v", err)
	}
	// A closed session frees its place (released when the server sees the end).
	first.Close()
	brokertest.Poll(brokertest.WaitLimit, func() bool { return l.room(ctx) == nil })
	if _, err := connectInMemory(t, ctx, s, TransportSSE); err != nil {
		t.Fatalf("session after one closed: %v", err)
	}
}

// TestSessionTimeoutClosesIdleSessionsOnly: past session_timeout, an idle
// /mcp session is closed; a /mcp session with a call in flight, SSE and
// WebSocket sessions (busy while connected) and the IDE's are not.
func TestSessionTimeoutClosesIdleSessionsOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("idle", 0, 0, 150*time.Millisecond)
	s, started, release := gatedServer(t, l)

	idle, err := connectNamed(t, ctx, s, TransportHTTP, "idle")
	if err != nil {
		t.Fatal(err)
	}
	busy, err := connectNamed(t, ctx, s, TransportHTTP, "busy")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]*mcp.ClientSession{}
	for _, name := range []string{TransportSSE, TransportWS, TransportStdio} {
		if kept[name], err = connectInMemory(t, ctx, s, name); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		done <- err
	}()
	<-started
	// Sweeps begin once every session is as it should be: however slow
	// the setup, none was idle before.
	go l.Sweep(ctx, s, nil)
	waitErr := make(chan error, 1)
	go func() { waitErr <- idle.Wait() }()
	select {
	case <-waitErr: // the server closed the idle session
	case <-time.After(10 * time.Second):
		t.Fatal("idle session still open 10s past a 150ms session_timeout")
	}
	for name, cs := range kept {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
			t.Errorf("the %s session, open past session_timeout: %v", name, err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the call that outlived session_timeout: %v", err)
	}
}

// serverSession is the server side of the session of client name.
func serverSession(t *testing.T, s *mcp.Server, name string) *mcp.ServerSession {
	t.Helper()
	for ss := range s.Sessions() {
		if init := ss.InitializeParams(); init != nil && init.ClientInfo.Name == name {
			return ss
		}
	}
	t.Fatalf("no session of client %s", name)
	return nil
}

// connectNamed connects a client called name as a session of transport tr,
// and makes one call on it: a session in use.
func connectNamed(t *testing.T, ctx context.Context, s *mcp.Server, tr, name string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := handshake(t, ctx, s, tr, name)
	if err != nil {
		return nil, err
	}
	// A round trip: the server has handled notifications/initialized, so
	// the session's last activity is this call's end.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatal(err)
	}
	return cs, nil
}

// handshake connects a client called name as a session of transport tr:
// initialize and notifications/initialized, nothing more.
func handshake(t *testing.T, ctx context.Context, s *mcp.Server, tr, name string) (*mcp.ClientSession, error) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(withTransport(ctx, named(t, tr)), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	// A client of 2025-11-25 initializes, as clients of /mcp do (a newer
	// one would probe with server/discover and hold no session).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// TestSessionInItsHandshakeIsNotEvicted: a session that has only
// initialized is not ended for a newcomer during handshakeGrace (the
// newcomer is told when to retry), and is once it has been used.
func TestSessionInItsHandshakeIsNotEvicted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("one", 1, 0, 0)
	s, _, _ := gatedServer(t, l)
	fresh, err := handshake(t, ctx, s, TransportHTTP, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectNamed(t, ctx, s, TransportHTTP, "early"); !busyCode(err) {
		t.Fatalf("newcomer while the only session is in its handshake: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	if be := l.room(ctx); be == nil || be.retry < 1 || be.retry > int(handshakeGrace/time.Second) {
		t.Fatalf("refusal %+v: want a Retry-After of 1..%d s", be, int(handshakeGrace/time.Second))
	}
	victim := l.book.places(time.Now().Add(handshakeGrace)).victim
	if victim == nil || victim.ss != serverSession(t, s, "fresh") {
		t.Fatalf("after handshakeGrace the session is not evictable: %+v", victim)
	}
	if _, err := fresh.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatal(err)
	}
	if _, err := connectNamed(t, ctx, s, TransportHTTP, "late"); err != nil {
		t.Fatalf("newcomer once the session was used: %v", err)
	}
}

// TestIdleSessionMakesWayForANewcomer fills a project of two with a busy
// session (a tool call running) and an idle one: a newcomer ends the idle
// one and takes its place, and the busy one never notices. With both
// places busy, a newcomer is refused, until one of them goes idle.
func TestIdleSessionMakesWayForANewcomer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("full", 2, 0, 0)
	var events []string
	l.Counted = func(ev string) { events = append(events, ev) }
	s, started, release := gatedServer(t, l)
	busy, err := connectNamed(t, ctx, s, TransportHTTP, "busy")
	if err != nil {
		t.Fatal(err)
	}
	idle, err := connectNamed(t, ctx, s, TransportHTTP, "idle")
	if err != nil {
		t.Fatal(err)
	}
	victim := serverSession(t, s, "idle")
	calls := make(chan error, 2)
	call := func(cs *mcp.ClientSession) {
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
			calls <- err
		}()
		<-started
	}
	call(busy)

	newcomer, err := connectNamed(t, ctx, s, TransportHTTP, "newcomer")
	if err != nil {
		t.Fatalf("newcomer with an idle session in the project: %v", err)
	}
	gone := make(chan struct{})
	go func() { _ = victim.Wait(); close(gone) }()
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("the evicted session is still open")
	}
	if _, err := idle.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err == nil {
		t.Error("the evicted session still answers")
	}

	// Both places busy: refused, and admitted once one goes idle.
	call(newcomer)
	if _, err := connectNamed(t, ctx, s, TransportHTTP, "late"); !busyCode(err) {
		t.Fatalf("newcomer while both places are busy: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	close(release)
	for range 2 {
		if err := <-calls; err != nil {
			t.Fatalf("a busy session's call: %v", err)
		}
	}
	if _, err := connectNamed(t, ctx, s, TransportHTTP, "later"); err != nil {
		t.Fatalf("newcomer once the calls ended: %v", err)
	}
	if want := []string{metrics.SessionEvicted, metrics.SessionRefused, metrics.SessionEvicted}; !slices.Equal(events, want) {
		t.Errorf("events counted %v, want %v", events, want)
	}
}

// TestNewcomerWaitsForARequestFinishing fills a project of one with a
// session whose call is in flight: a newcomer checked while the call ends
// gets a place (the finished session makes way) instead of a refusal, and
// one checked while a stream holds the place is refused at once.
func TestNewcomerWaitsForARequestFinishing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("one", 1, 0, 0)
	s, started, release := gatedServer(t, l)
	busy, err := connectNamed(t, ctx, s, TransportHTTP, "busy")
	if err != nil {
		t.Fatal(err)
	}
	called := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		called <- err
	}()
	<-started
	room := make(chan *busyError, 1)
	go func() { room <- l.room(ctx) }()
	close(release)
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	select {
	case be := <-room:
		if be != nil {
			t.Fatalf("newcomer while the only session's call finished: refused: %v", be)
		}
	case <-ctx.Done():
		t.Fatal("room never answered")
	}

	// A stream session's place is not about to free: the refusal does
	// not wait for finishWait.
	stream := testLimits("stream", 1, 0, 0)
	ss, _, _ := gatedServer(t, stream)
	if _, err := connectInMemory(t, ctx, ss, TransportSSE); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, finishWait/2)
	defer stop()
	if be := stream.room(short); be == nil {
		t.Fatal("newcomer while a stream session holds the only place: admitted")
	}
	if short.Err() != nil {
		t.Fatal("the refusal waited although no session was finishing a request")
	}
}

// TestNoLimitStillKeepsFewIdleSessions opens keepIdle+2 sessions on a
// project without mcp.max_sessions and leaves them idle: once they have
// been idle idleGrace, the sweep ends the two idle longest, and never a
// busy one.
func TestNoLimitStillKeepsFewIdleSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := testLimits("open", 0, 0, 0)
	s, started, release := gatedServer(t, l)
	defer close(release)
	busy, err := connectNamed(t, ctx, s, TransportHTTP, "busy")
	if err != nil {
		t.Fatal(err)
	}
	go busy.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
	<-started
	var oldest []*mcp.ServerSession
	for i := range keepIdle + 2 {
		name := fmt.Sprintf("c%d", i)
		if _, err := connectNamed(t, ctx, s, TransportHTTP, name); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			oldest = append(oldest, serverSession(t, s, name))
		}
	}
	if due := l.due(s, time.Now()); len(due) != 0 {
		t.Fatalf("%d sessions due while none has been idle %s", len(due), idleGrace)
	}
	due := l.due(s, time.Now().Add(time.Hour))
	var got []*mcp.ServerSession
	for _, d := range due {
		got = append(got, d.ss)
	}
	if len(got) != 2 || !slices.Contains(got, oldest[0]) || !slices.Contains(got, oldest[1]) {
		t.Fatalf("sessions due: %d, want the 2 idle longest", len(got))
	}
}

// named is the transport called name.
func named(t *testing.T, name string) *transport {
	t.Helper()
	for _, tr := range transports {
		if tr.name == name {
			return tr
		}
	}
	t.Fatalf("no transport %s", name)
	return nil
}
