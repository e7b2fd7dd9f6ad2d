package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stepServer has a tool "step" that sends a progress notification, waits
// for a word on next and answers "done" (after 20 s without one, an
// error); "nop" answers at once.
func stepServer(next <-chan struct{}) *mcp.Server {
	srv := benchServer()
	mcp.AddTool(srv, &mcp.Tool{Name: "step"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "half way"}); err != nil {
			return nil, struct{}{}, err
		}
		select {
		case <-next:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, struct{}{}, nil
		case <-time.After(20 * time.Second):
			return nil, struct{}{}, errors.New("no word from the test within 20s: did its client see the progress?")
		}
	})
	return srv
}

// stepSession serves stepServer with an event store and opens a session;
// closing next lets its step tool answer. ctx ends with the test (30 s at most).
func stepSession(t *testing.T) (ctx context.Context, url, sid string, next chan struct{}) {
	t.Helper()
	next = make(chan struct{})
	url = serveHandler(t, newHandler(stepServer(next), Options{EventStore: NewEventStore()}))
	_, sid, _ = post(t, url, "", initBody)
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, url, sid, next
}

const stepCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"step","arguments":{},"_meta":{"progressToken":"p1"}}}`

// rawPost sends body on session sid with ctx and returns the response, unread.
func rawPost(t *testing.T, ctx context.Context, url, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvent reads one event of an SSE stream: its id and data.
func sseEvent(t *testing.T, r *bufio.Reader) (id, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before an event: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && data != "":
			return id, data
		}
	}
}

func TestAnswerWithNothingBeforeItIsOneJSONBody(t *testing.T) {
	h := newHandler(stepServer(nil), Options{EventStore: NewEventStore()})
	url := serveHandler(t, h)
	ctx := context.Background()
	resp := rawPost(t, ctx, url, "", initBody)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || sid == "" || !strings.HasPrefix(string(raw), `{"jsonrpc":"2.0","id":1,"result":`) {
		t.Fatalf("initialize: %s session %q: %s", ct, sid, raw)
	}
	rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	resp = rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nop","arguments":{}}}`)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || resp.ContentLength != int64(len(raw)) || !strings.HasPrefix(string(raw), `{"jsonrpc":"2.0","id":2,"result":`) {
		t.Fatalf("a call: %s, length %d: %s", ct, resp.ContentLength, raw)
	}
	// A batch (protocol 2025-03-26) keeps its SSE stream: one event per answer.
	resp = rawPost(t, ctx, url, sid, `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || strings.Count(string(raw), "event: message") != 2 {
		t.Fatalf("a batch: %s: %s", ct, raw)
	}
}

// TestProgressOfACallStreamsBeforeItsAnswer: a call that sends a progress
// notification is answered as an SSE stream whose notification reaches the
// client while the tool still runs (the tool answers only after the client
// read it), and whose answer follows on the same stream.
func TestProgressOfACallStreamsBeforeItsAnswer(t *testing.T) {
	ctx, url, sid, next := stepSession(t)
	resp := rawPost(t, ctx, url, sid, stepCall)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("a call with progress: %s", ct)
	}
	r := bufio.NewReader(resp.Body)
	if _, data := sseEvent(t, r); !strings.Contains(data, `"notifications/progress"`) || !strings.Contains(data, "half way") {
		t.Fatalf("first event %s, want the progress", data)
	}
	close(next) // the tool answers only now
	if _, data := sseEvent(t, r); !strings.HasPrefix(data, `{"jsonrpc":"2.0","id":7,"result":`) || !strings.Contains(data, "done") {
		t.Fatalf("second event %s, want the answer", data)
	}
	if rest, _ := io.ReadAll(r); strings.TrimSpace(string(rest)) != "" {
		t.Fatalf("after the answer: %q", rest)
	}
}

// TestAnswerOfADroppedStreamIsReplayed: a client whose POST stream breaks
// after the progress resumes it with Last-Event-ID and gets the answer.
func TestAnswerOfADroppedStreamIsReplayed(t *testing.T) {
	ctx, url, sid, next := stepSession(t)
	postCtx, drop := context.WithCancel(ctx)
	resp := rawPost(t, postCtx, url, sid, stepCall)
	last, data := sseEvent(t, bufio.NewReader(resp.Body))
	if last == "" || !strings.Contains(data, "half way") {
		t.Fatalf("first event %q %s", last, data)
	}
	drop()
	resp.Body.Close()
	close(next)
	// The answer is stored whether or not its stream is there; wait (a
	// bounded number of tries) until it is, then resume.
	for try := 0; ; try++ {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(HeaderSessionID, sid)
		req.Header.Set("Last-Event-ID", last)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(raw), `"id":7,"result"`) {
			return
		}
		if try == 200 {
			t.Fatalf("resumed after %s: %d %s, want the answer", last, resp.StatusCode, raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestIsAnswer(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                     true,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`:        true,
		`{"id":{"odd":[1,2]},"jsonrpc":"2.0","result":null}`:                       true,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`:          false,
		`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}`:   false,
		`{"jsonrpc":"2.0","params":{"result":1},"method":"notifications/message"}`: false,
		`{"jsonrpc":"2.0","id":1}`:                                                 false,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`:                                   false,
		`{"jsonrpc":"2.0","id":1,"result":`:                                        true, // decided before the value
		`{"jsonrpc":"2.0","id":"a\"b","result":{}}`:                                true, // an escaped id: decoded
		`{"jsonrpc":"2.0","id":-12,"method":"ping"}`:                               false,
		`{"jsonrpc":"2.0","method":"x","id":1}`:                                    false,
		`not json`:                                                                 false,
		``:                                                                         false,
	} {
		if got := isAnswer([]byte(msg)); got != want {
			t.Errorf("isAnswer(%s) = %v, want %v", msg, got, want)
		}
	}
}

func TestEventData(t *testing.T) {
	for p, want := range map[string]string{
		"event: message\nid: s_0\ndata: {\"a\":1}\n\n":  `{"a":1}`,
		"event: message\ndata: {}\n\n":                  `{}`,
		"event: prime\nid: s_0\ndata: \n\n":             "",
		"event: message\nid: s_0\ndata: a\ndata: b\n\n": "",
		"event: message\nid: s_0\ndata: {}\n":           "",
		"event: message\nretry: 5\ndata: {}\n\n":        "",
		"data: {}\n\n":                                  "",
	} {
		got, ok := eventData([]byte(p))
		if string(got) != want || ok != (want != "") {
			t.Errorf("eventData(%q) = %q %v, want %q", p, got, ok, want)
		}
	}
}

// FuzzIsAnswer checks isAnswer against the messages it is given in
// Berth: whatever the go-sdk encodes (jsonrpc.EncodeMessage, as its
// streamable transport does) is an answer exactly when it is a response.
func FuzzIsAnswer(f *testing.F) {
	f.Add(true, int64(1), "", []byte(`{}`), false)
	f.Add(false, int64(2), "roots/list", []byte(`{"a":[1,{"result":2}]}`), false)
	f.Add(false, int64(0), "notifications/progress", []byte(`{"progressToken":"p"}`), true)
	f.Add(true, int64(3), "", []byte(`"text"`), true)
	f.Add(true, int64(-4), "a \"quoted\" id", []byte(`[]`), false)
	f.Fuzz(func(t *testing.T, response bool, id int64, method string, payload []byte, fail bool) {
		if !json.Valid(payload) {
			return
		}
		mustID := func(t *testing.T, id int64) jsonrpc.ID {
			t.Helper()
			var v jsonrpc.ID
			var err error
			if id%2 == 0 && method != "" { // a string id: the method's text
				v, err = jsonrpc.MakeID(method)
			} else {
				v, err = jsonrpc.MakeID(float64(id))
			}
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		var msg jsonrpc.Message
		switch {
		case response && fail:
			msg = &jsonrpc.Response{ID: mustID(t, id), Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: string(payload)}}
		case response:
			msg = &jsonrpc.Response{ID: mustID(t, id), Result: payload}
		case fail: // a notification
			msg = &jsonrpc.Request{Method: method, Params: payload}
		default:
			msg = &jsonrpc.Request{ID: mustID(t, id), Method: method, Params: payload}
		}
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return
		}
		if got := isAnswer(data); got != response {
			t.Fatalf("isAnswer(%s) = %v, want %v", data, got, response)
		}
	})
}
