package streamable

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func replay(s *EventStore, session, stream string, index int) ([]string, error) {
	var out []string
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

func TestEventStoreKeepsTheNewestWithinItsBounds(t *testing.T) {
	ctx := context.Background()
	s := NewEventStore()
	for i := range MaxStreams + 2 {
		id := fmt.Sprint("post", i)
		_ = s.Open(ctx, "a", id)
		_ = s.Append(ctx, "a", id, []byte(id))
	}
	if _, err := replay(s, "a", "post0", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("a stream past MaxStreams: %v, want ErrEventsPurged", err)
	}
	if got, err := replay(s, "a", fmt.Sprint("post", MaxStreams+1), -1); err != nil || len(got) != 1 {
		t.Fatalf("the newest stream: %v %v", got, err)
	}

	big := strings.Repeat("x", MaxSessionBytes/4-16) // four fit
	for i := range 6 {
		_ = s.Append(ctx, "b", "", []byte(fmt.Sprint(i, big)))
	}
	got, err := replay(s, "b", "", 1)
	if err != nil || len(got) != 4 || !strings.HasPrefix(got[0], "2") {
		t.Fatalf("after index 1 with 4 of 6 events kept: %d events %v", len(got), err)
	}
	if _, err := replay(s, "b", "", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("events dropped for size: %v, want ErrEventsPurged", err)
	}
	if _, err := replay(s, "c", "", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("a session the store never held: %v", err)
	}
	_ = s.SessionClosed(ctx, "b")
	if _, err := replay(s, "b", "", 5); err == nil {
		t.Fatal("a closed session's events are still there")
	}
}

// openGET opens sid's GET stream on url, resuming after last when set.
func openGET(t *testing.T, ctx context.Context, url, sid, last string) (*bufio.Reader, context.CancelFunc) {
	t.Helper()
	gctx, stop := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(gctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderSessionID, sid)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		stop()
		t.Fatalf("GET (Last-Event-ID %q): %v %v", last, err, resp)
	}
	return bufio.NewReader(resp.Body), stop
}

// listChanged adds a tool named name to srv: a notification on its
// sessions' GET streams.
func listChanged(srv *mcp.Server, name string) {
	mcp.AddTool(srv, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
}

// TestGETStreamResumesWithLastEventID: notifications sent while a
// session's GET stream is away are replayed when it comes back with
// Last-Event-ID; a session restored after a restart resumes its GET
// stream from the client's last event id.
func TestGETStreamResumesWithLastEventID(t *testing.T) {
	srv := benchServer()
	saved := map[string]*mcp.ServerSessionState{"old": {
		InitializeParams: &mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "c", Version: "1"}},
	}}
	h := newHandler(srv, Options{EventStore: NewEventStore(), Restore: func(id string) (*mcp.ServerSessionState, bool) { st, ok := saved[id]; return st, ok }})
	url := serveHandler(t, h)
	_, sid, _ := post(t, url, "", initBody)
	if sid == "" {
		t.Fatal("no session")
	}
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	open := func(sid, last string) (*bufio.Reader, context.CancelFunc) {
		t.Helper()
		return openGET(t, ctx, url, sid, last)
	}
	next := func(r *bufio.Reader) (id, data string) { t.Helper(); return sseEvent(t, r) }

	r, stop := open(sid, "")
	listChanged(srv, "t1")
	first, data := next(r)
	if first == "" || !strings.Contains(data, "list_changed") {
		t.Fatalf("first event %q %q", first, data)
	}
	stop()
	// The stream is away (bounded wait until the server has let it go).
	var missed string
	brokertest.Poll(brokertest.WaitLimit, func() bool {
		listChanged(srv, fmt.Sprint("t", time.Now().UnixNano()))
		r, stop = open(sid, first)
		id, d := next(r)
		if id != first {
			missed = d
			return true
		}
		stop()
		return false
	})
	stop()
	if !strings.Contains(missed, "list_changed") {
		t.Fatalf("resumed with Last-Event-ID %s: %q, want the notification it missed", first, missed)
	}

	// A restored session: its stream goes on from the client's id.
	r, stop = open("old", "_41")
	defer stop()
	listChanged(srv, "t-restored")
	if id, _ := next(r); id != "_42" {
		t.Fatalf("first event of a restored stream resumed at _41: id %q, want _42", id)
	}
}

// TestPlainCallsKeepTheGETStreamResumable: calls answered with one JSON
// body (no event before the answer, so no event id a client could resume
// from) open no stream in the store, so a busy session's calls never push
// its GET stream's events out of it (MaxStreams): the GET stream resumes
// after more calls than MaxStreams.
func TestPlainCallsKeepTheGETStreamResumable(t *testing.T) {
	srv := benchServer()
	url := serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()}))
	sid := rawSession(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	open := func(last string) (*bufio.Reader, context.CancelFunc) {
		t.Helper()
		return openGET(t, ctx, url, sid, last)
	}
	r, stop := open("")
	listChanged(srv, "t1")
	first, data := sseEvent(t, r)
	if first == "" || !strings.Contains(data, "list_changed") {
		t.Fatalf("first event %q %q", first, data)
	}
	stop()
	for i := range MaxStreams + 2 {
		status, _, body := post(t, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nop","arguments":{}}}`, 100+i))
		if status != http.StatusOK || !strings.Contains(body, `"result"`) {
			t.Fatalf("call %d: %d %s", i, status, body)
		}
	}
	var missed string
	brokertest.Poll(brokertest.WaitLimit, func() bool {
		listChanged(srv, fmt.Sprint("t", time.Now().UnixNano()))
		r, stop = open(first)
		id, d := sseEvent(t, r)
		stop()
		if id != first {
			missed = d
			return true
		}
		return false
	})
	if !strings.Contains(missed, "list_changed") {
		t.Fatalf("resumed with Last-Event-ID %s after %d calls: %q, want the notification it missed", first, MaxStreams+2, missed)
	}
}
