package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

const echoCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`

// events records what the handler tells its options.
type events struct {
	mu        sync.Mutex
	connected []string // id, "+restored" when restored
	ended     []string
	tracked   int
}

func (e *events) list(f *[]string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), *f...)
}

// serve starts a handler for a server whose whoami tool names the client
// of the session, with saved sessions restorable and the options recorded.
func serve(t *testing.T, saved map[string]*mcp.ServerSessionState, refuse bool) (*Handler, string, *events) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Session.InitializeParams().ClientInfo.Name}}}, struct{}{}, nil
	})
	ev := &events{}
	h := newHandler(srv, Options{
		Restore: func(id string) (*mcp.ServerSessionState, bool) { st, ok := saved[id]; return st, ok },
		Connected: func(_ *http.Request, ss *mcp.ServerSession, restored bool) error {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			id := ss.ID()
			if restored {
				id += "+restored"
				if refuse {
					return errors.New("full")
				}
			}
			ev.connected = append(ev.connected, id)
			return nil
		},
		Refuse: func(w http.ResponseWriter, err error) { http.Error(w, err.Error(), http.StatusServiceUnavailable) },
		Ended: func(id string) {
			ev.mu.Lock()
			ev.ended = append(ev.ended, id)
			ev.mu.Unlock()
		},
		Track: func(*mcp.ServerSession, bool) func() {
			ev.mu.Lock()
			ev.tracked++
			ev.mu.Unlock()
			return func() {}
		},
	})
	return h, serveHandler(t, h), ev
}

// serveHandler serves h on loopback until the test ends.
func serveHandler(t *testing.T, h *Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(); ts.Close() })
	return ts.URL
}

// post sends body on session sid ("" for none) and returns the status, the
// session id header and the first JSON-RPC message's text, if any.
func post(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	for line := range strings.Lines(text) {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			text = strings.TrimSpace(d)
			break
		}
	}
	return resp.StatusCode, resp.Header.Get(HeaderSessionID), text
}

// who is the text of a whoami result.
func who(t *testing.T, msg string) string {
	t.Helper()
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil || len(m.Result.Content) == 0 {
		t.Fatalf("not a tool result: %q", msg)
	}
	return m.Result.Content[0].Text
}

func TestSessionsLiveInTheTableAndEndWithDELETEOrClose(t *testing.T) {
	h, url, ev := serve(t, nil, false)
	status, sid, _ := post(t, url, "", initBody)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", status, sid)
	}
	if status, _, msg := post(t, url, sid, echoCall); status != http.StatusOK || who(t, msg) != "t" {
		t.Fatalf("a call on the session: %d %s", status, msg)
	}
	if !h.Close(sid) {
		t.Fatal("Close did not find the session")
	}
	if status, _, _ := post(t, url, sid, echoCall); status != http.StatusNotFound {
		t.Fatalf("a closed session's next request: %d, want 404", status)
	}
	_, other, _ := post(t, url, "", initBody)
	del, _ := http.NewRequest("DELETE", url, nil)
	del.Header.Set(HeaderSessionID, other)
	if status, _, _ := do(t, del); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _, _ := post(t, url, other, echoCall); status != http.StatusNotFound {
		t.Fatalf("a deleted session's next request: %d, want 404", status)
	}
	if got := ev.list(&ev.ended); len(got) != 2 || got[0] != sid || got[1] != other {
		t.Fatalf("ended %v, want [%s %s]", got, sid, other)
	}
	// A session left to Shutdown is not reported ended: it may be restored.
	_, third, _ := post(t, url, "", initBody)
	h.Shutdown()
	if got := ev.list(&ev.ended); len(got) != 2 {
		t.Fatalf("Shutdown reported %v ended", got[2:])
	}
	if status, _, _ := post(t, url, third, echoCall); status != http.StatusNotFound {
		t.Fatalf("after Shutdown: %d, want 404", status)
	}
}

func TestSavedSessionIsRestoredUnderItsID(t *testing.T) {
	saved := map[string]*mcp.ServerSessionState{"old": {
		InitializeParams:          &mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "before", Version: "1"}},
		InitializedParams:         &mcp.InitializedParams{},
		NegotiatedProtocolVersion: "2025-06-18",
	}}
	_, url, ev := serve(t, saved, false)
	status, _, msg := post(t, url, "old", echoCall)
	if status != http.StatusOK || who(t, msg) != "before" {
		t.Fatalf("a call on a saved session: %d %s", status, msg)
	}
	if status, _, msg := post(t, url, "old", echoCall); status != http.StatusOK || who(t, msg) != "before" {
		t.Fatalf("the restored session's second call: %d %s", status, msg)
	}
	if got := ev.list(&ev.connected); len(got) != 1 || got[0] != "old+restored" {
		t.Fatalf("connected %v, want one restore", got)
	}
	if status, _, _ := post(t, url, "never-saved", echoCall); status != http.StatusNotFound {
		t.Fatalf("an unknown id: %d, want 404", status)
	}
}

func TestRefusedRestoreIsAnsweredAndKept(t *testing.T) {
	saved := map[string]*mcp.ServerSessionState{"old": {
		InitializeParams: &mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "before", Version: "1"}},
	}}
	_, url, ev := serve(t, saved, true)
	if status, _, body := post(t, url, "old", echoCall); status != http.StatusServiceUnavailable || !strings.Contains(body, "full") {
		t.Fatalf("a refused restore: %d %s", status, body)
	}
	if got := ev.list(&ev.ended); len(got) != 0 {
		t.Fatalf("a refused restore was reported ended: %v", got)
	}
	// DELETE of a saved session ends it without connecting it.
	del, _ := http.NewRequest("DELETE", url, nil)
	del.Header.Set(HeaderSessionID, "old")
	if status, _, _ := do(t, del); status != http.StatusNoContent {
		t.Fatalf("DELETE of a saved session: %d", status)
	}
	if got := ev.list(&ev.ended); len(got) != 1 || got[0] != "old" {
		t.Fatalf("ended %v, want [old]", got)
	}
}

// TestGoSDKClientProbesThenInitializes connects the go-sdk client, which
// first probes with server/discover (a request that opens no session, so
// it goes to the go-sdk's own handler) and then initializes: one session
// in the table, and it works.
func TestGoSDKClientProbesThenInitializes(t *testing.T) {
	_, url, ev := serve(t, nil, false)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "go" {
		t.Fatalf("whoami: %v %+v", err, res)
	}
	if got := ev.list(&ev.connected); len(got) != 1 || got[0] != cs.ID() {
		t.Fatalf("sessions in the table %v, want the client's %s alone", got, cs.ID())
	}
}
