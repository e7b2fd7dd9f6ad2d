package streamable

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// leaving is a server whose tool "wait" and prompt "wait" run until
// released or cancelled; the tool first sends a progress notification, so
// that its POST's stream carries an event id to resume from.
type leaving struct {
	started, cancelled chan string
	release            chan struct{}
}

func serveLeaving(t *testing.T) (string, *leaving) {
	t.Helper()
	l := &leaving{started: make(chan string, 4), cancelled: make(chan string, 4), release: make(chan struct{})}
	wait := func(ctx context.Context, what string) error {
		l.started <- what
		select {
		case <-ctx.Done():
			l.cancelled <- what
			return ctx.Err()
		case <-l.release:
			return nil
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s: neither released nor cancelled within 30s", what)
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "waiting"})
		}
		if err := wait(ctx, "tool"); err != nil {
			return nil, struct{}{}, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, struct{}{}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "wait"}, func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if err := wait(ctx, "prompt"); err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{}, nil
	})
	return serveHandler(t, newHandler(srv, Options{EventStore: NewEventStore()})), l
}

// rawSession initializes a session at protocol 2025-06-18.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	code, sid, _ := post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", code, sid)
	}
	if code, _, _ := post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", code)
	}
	return sid
}

// open sends a request on session sid that the client can drop (cancel)
// and returns its response, read as it comes.
func open(t *testing.T, ctx context.Context, method, url, sid, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderSessionID, sid)
	req.Header.Set(headerVersion, "2025-06-18")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func expect(t *testing.T, ch <-chan string, want, what string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("%s: %s, want %s", what, got, want)
		}
	case <-time.After(ResumeGrace + 10*time.Second):
		t.Fatalf("%s: never within %s", what, ResumeGrace+10*time.Second)
	}
}

// TestCallWhoseClientLeftIsCancelled: a prompts/get (handed to the
// session) and a tools/call (run by the fast path in its POST's goroutine)
// whose POST's connection goes away, with no notifications/cancelled, are
// cancelled once ResumeGrace has passed.
func TestCallWhoseClientLeftIsCancelled(t *testing.T) {
	for _, c := range []struct{ what, body string }{
		{"prompt", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"wait"}}`},
		{"tool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`},
	} {
		t.Run(c.what, func(t *testing.T) {
			url, l := serveLeaving(t)
			sid := rawSession(t, url)
			ctx, leave := context.WithCancel(context.Background())
			go func() {
				// Its answer's headers come with the answer: the client is left
				// waiting for them.
				req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set(HeaderSessionID, sid)
				req.Header.Set(headerVersion, "2025-06-18")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			expect(t, l.started, c.what, "the call starts")
			left := time.Now()
			leave()
			expect(t, l.cancelled, c.what, "the call of a client that left is cancelled")
			if waited := time.Since(left); waited < ResumeGrace {
				t.Fatalf("cancelled %s after the client left, before ResumeGrace (%s)", waited, ResumeGrace)
			}
		})
	}
}

// TestCallWhoseClientResumesRunsOn: a client whose POST's stream broke and
// that resumes it (a GET with the Last-Event-ID it saw) within ResumeGrace
// keeps its call, and reads its answer from the stream.
func TestCallWhoseClientResumesRunsOn(t *testing.T) {
	url, l := serveLeaving(t)
	sid := rawSession(t, url)
	ctx, leave := context.WithCancel(context.Background())
	resp := open(t, ctx, "POST", url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","_meta":{"progressToken":"p"}}}`)
	expect(t, l.started, "tool", "the tool starts")
	lastID := ""
	sc := bufio.NewScanner(resp.Body)
	for lastID == "" && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			lastID = id
		}
	}
	if lastID == "" {
		t.Fatal("the call's stream carried no event id")
	}
	leave()
	resp.Body.Close()
	get := open(t, context.Background(), "GET", url, sid, "", "Last-Event-ID", lastID)
	get.Body.Close()
	select {
	case what := <-l.cancelled:
		t.Fatalf("the %s of a client that resumed was cancelled", what)
	case <-time.After(ResumeGrace + time.Second):
	}
	close(l.release)
	// The answer is stored for the stream it resumes.
	var answer string
	for range 50 {
		get := open(t, context.Background(), "GET", url, sid, "", "Last-Event-ID", lastID)
		sc := bufio.NewScanner(get.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id":2`) {
				answer = d
			}
		}
		get.Body.Close()
		if answer != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(answer, "released") {
		t.Fatalf("the resumed stream's answer: %q", answer)
	}
}
