package streamable

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastPathTakesPlainCallsOnly: which POSTs the fast path takes; the
// rest goes to the go-sdk's transport, which checks what the fast path
// does not (batches, Last-Event-ID on a POST, the sessionless protocol's
// headers and _meta keys, notifications and responses).
func TestFastPathTakesPlainCallsOnly(t *testing.T) {
	plain := map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`:                                                                  true,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`:                                                                                            true,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`:                                                                                        true,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}}`:                                                       true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`:                                                                                        false, // no params: the go-sdk's 400
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`:                                                                          false,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                                                                                false,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`:                                                                            false,
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`:                                                                  false,
		`{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}`:                                                                               false,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                                                                                  false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`: false,
	}
	for body, want := range plain {
		msg, err := decodeForTest(body)
		req, ok := msg.(*jsonrpc.Request)
		if got := err == nil && ok && plainCall(req); got != want {
			t.Errorf("%s: fast %v, want %v", body, got, want)
		}
	}
	for h, want := range map[string]bool{
		"":                                 true,
		"Mcp-Protocol-Version: 2025-11-25": true,
		"Mcp-Protocol-Version: 2026-07-28": false,
		"Last-Event-ID: abc_1":             false,
		"Mcp-Method: tools/call":           false,
		"Mcp-Name: x":                      false,
		"Mcp-Session-Id: s":                true,
		"Authorization: Bearer x":          true,
	} {
		header := http.Header{}
		if name, value, ok := strings.Cut(h, ": "); ok {
			header.Set(name, value)
		}
		if got := fastRequest(header); got != want {
			t.Errorf("header %q: fast %v, want %v", h, got, want)
		}
	}
}

// TestAReusedIDInFlightIsRefused: a second call with the id of a call in
// flight on the session is answered 400 with a JSON-RPC error, as the
// go-sdk answers it, and the first call is answered all the same.
func TestAReusedIDInFlightIsRefused(t *testing.T) {
	ctx, url, sid, next := stepSession(t)
	first := rawPost(t, ctx, url, sid, stepCall)
	defer first.Body.Close()
	r := bufio.NewReader(first.Body)
	if _, data := sseEvent(t, r); !strings.Contains(data, "half way") { // the first call is in flight
		t.Fatalf("first event %s", data)
	}
	again := rawPost(t, ctx, url, sid, stepCall)
	raw, _ := io.ReadAll(again.Body)
	again.Body.Close()
	if again.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "duplicate in-flight request ID 7") || !strings.Contains(string(raw), `"id":7`) {
		t.Fatalf("the same id again: %d %s", again.StatusCode, raw)
	}
	close(next)
	if _, data := sseEvent(t, r); !strings.HasPrefix(data, `{"jsonrpc":"2.0","id":7,"result":`) {
		t.Fatalf("the first call's answer: %s", data)
	}
}

// TestAServerRequestDuringAFastCall: a tool that asks the client for its
// roots while a call runs: the request goes out on the call's POST stream,
// the client's answer comes back as a POST of its own (through the
// go-sdk's transport), and the call's answer follows on its stream; the
// go-sdk's own client does all of it.
func TestAServerRequestDuringAFastCall(t *testing.T) {
	srv := benchServer()
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		if ctx.Value(fastKey{}) == nil {
			return nil, struct{}{}, fmt.Errorf("the call did not take the fast path")
		}
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, struct{}{}, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d roots, first %s", len(res.Roots), res.Roots[0].URI)}}}, struct{}{}, nil
	})
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///work/one"}, &mcp.Root{URI: "file:///work/two"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots"})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; text != "2 roots, first file:///work/one" {
			t.Fatalf("the tool's answer: %q", text)
		}
	}
}

func decodeForTest(body string) (jsonrpc.Message, error) { return jsonrpc.DecodeMessage([]byte(body)) }

// newHandler is New with the fast path on, as the broker runs it.
func newHandler(srv *mcp.Server, opts Options) *Handler {
	h := New(srv, opts)
	srv.AddReceivingMiddleware(h.Middleware)
	return h
}

// TestFastToolCallAnswersAsTheGoSDK: a tools/call run by the fast path is
// answered byte for byte as the go-sdk's transport and session answer it
// (the same POST with an Mcp-Name header, which only the go-sdk reads, is
// left to them): a result (with characters JSON may escape), a tool's
// error as an isError result, a JSON-RPC error from the tool, an unknown
// tool, arguments the tool refuses. A middleware added before the fast
// path's sees the call.
func TestFastToolCallAnswersAsTheGoSDK(t *testing.T) {
	srv := benchServer()
	type args struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "say"}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, struct{}, error) {
		switch a.Text {
		case "fail":
			return nil, struct{}{}, errors.New("it failed <here> & there")
		case "rpc":
			return nil, struct{}{}, &jsonrpc.Error{Code: -32042, Message: "a code of the tool's"}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<" + a.Text + "> & \u2028"}}}, struct{}{}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "data"}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, map[string]any, error) {
		return nil, map[string]any{"said": "<" + a.Text + "> & \u2028", "n": []any{1.5, nil, true}, "deep": map[string]any{"z": "", "a": "\u00e9"}}, nil
	})
	var seen atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				seen.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	_, sid, _ := post(t, url, "", initBody)
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answer := func(body string, viaSDK bool) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(HeaderSessionID, sid)
		if viaSDK {
			req.Header.Set("Mcp-Name", "say") // any Mcp- header leaves the call to the go-sdk
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	for i, params := range []string{
		`{"name":"say","arguments":{"text":"hi"}}`,
		`{"name":"say","arguments":{"text":"fail"}}`,
		`{"name":"say","arguments":{"text":"rpc"}}`,
		`{"name":"nope","arguments":{}}`,
		`{"name":"say","arguments":{"text":5}}`,
		`{"name":"say","arguments":{"text":"x"},"_meta":{"k":[1,2]},"extra":true}`,
		`{"name":"data","arguments":{"text":"<b>"}}`,
	} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 100+i, params)
		before := seen.Load()
		fastCode, fast := answer(body, false)
		if seen.Load() != before+1 {
			t.Fatalf("%s: the middleware did not see the fast call", params)
		}
		sdkCode, sdk := answer(body, true)
		if fastCode != sdkCode || fast != sdk {
			t.Errorf("%s:\n fast path  %d %s\n the go-sdk %d %s", params, fastCode, fast, sdkCode, sdk)
		}
	}
}

// waitServer is benchServer with a tool, wait, that runs until its
// context ends (20 s at most): started closes when it runs, cancelled when
// its context ends.
func waitServer() (srv *mcp.Server, started, cancelled chan struct{}) {
	srv = benchServer()
	started, cancelled = make(chan struct{}), make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		close(started)
		select {
		case <-ctx.Done():
			close(cancelled)
			return nil, struct{}{}, ctx.Err()
		case <-time.After(20 * time.Second):
			return nil, struct{}{}, errors.New("not cancelled within 20s")
		}
	})
	return srv, started, cancelled
}

// TestFastToolCallIsCancelled: the client's notifications/cancelled (the
// go-sdk's client sends it when the call's context ends) cancels a
// tools/call the fast path runs.
func TestFastToolCallIsCancelled(t *testing.T) {
	srv, started, cancelled := waitServer()
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "wait"}); errc <- err }()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the tool never ran")
	}
	stop()
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("the tool's context was not cancelled")
	}
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
}

// TestCancelledCallGetsNoAnswer: a tools/call the client cancels with
// notifications/cancelled gets no answer (the MCP spec: the receiver
// should not answer a cancelled request), its tool's context ends, its
// POST ends, and the session's next call is answered.
func TestCancelledCallGetsNoAnswer(t *testing.T) {
	srv, started, cancelled := waitServer()
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	_, sid, _ := post(t, url, "", initBody)
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The POST's answer (its status line included) waits for the call's
	// end: it is read beside the test.
	type posted struct {
		status int
		body   string
		err    error
	}
	callc := make(chan posted, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(HeaderSessionID, sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			callc <- posted{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body) // ends when the POST does
		callc <- posted{resp.StatusCode, string(body), err}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the tool never ran")
	}
	note := rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user stopped it"}}`)
	note.Body.Close()
	if note.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %s", note.Status)
	}
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("the tool's context was not cancelled")
	}
	var p posted
	select {
	case p = <-callc:
	case <-ctx.Done():
		t.Fatal("the cancelled call's POST did not end")
	}
	if p.err != nil {
		t.Fatalf("the cancelled call's POST: %v", p.err)
	}
	if strings.Contains(p.body, `"id":7`) {
		t.Fatalf("the cancelled call was answered (%d): %s", p.status, p.body)
	}
	code, _, answer := post(t, url, sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nop","arguments":{}}}`)
	if code != http.StatusOK || !strings.Contains(answer, `"id":8`) || strings.Contains(answer, `"error"`) {
		t.Fatalf("the call after the cancelled one: %d %s", code, answer)
	}
}
