package streamable

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchServer is a server with a tool that does nothing, so that a call
// measures the transport.
func benchServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "nop"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	return srv
}

// tracked is a Track that counts, under a mutex, as the broker's book does.
func tracked() func(*mcp.ServerSession, bool) func() {
	var mu sync.Mutex
	n := map[*mcp.ServerSession]int{}
	return func(ss *mcp.ServerSession, _ bool) func() {
		mu.Lock()
		n[ss]++
		mu.Unlock()
		return func() { mu.Lock(); n[ss]--; mu.Unlock() }
	}
}

// BenchmarkToolCall is the cost of one tool call over loopback HTTP with
// the go-sdk client: through the go-sdk's own handler, and through the
// Berth session table (with request tracking and saved-session lookups
// wired, as the broker runs it).
func BenchmarkToolCall(b *testing.B) {
	for _, tc := range []struct {
		name    string
		handler func(*mcp.Server) http.Handler
	}{
		{"gosdk", func(srv *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		}},
		{"berth", func(srv *mcp.Server) http.Handler {
			return newHandler(srv, Options{
				EventStore: NewEventStore(),
				Restore:    func(string) (*mcp.ServerSessionState, bool) { return nil, false },
				Connected:  func(*http.Request, *mcp.ServerSession, bool) error { return nil },
				Ended:      func(string) {},
				Track:      tracked(),
			})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ts := httptest.NewServer(tc.handler(benchServer()))
			defer ts.Close()
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nop"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRestore is the cost of the first request of a session a
// previous broker saved (connecting it again under its id), against a
// request of a live session: both a raw tools/call POST.
func BenchmarkRestore(b *testing.B) {
	state := &mcp.ServerSessionState{
		InitializeParams:          &mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "c", Version: "1"}},
		InitializedParams:         &mcp.InitializedParams{},
		NegotiatedProtocolVersion: "2025-06-18",
	}
	h := newHandler(benchServer(), Options{
		Restore: func(id string) (*mcp.ServerSessionState, bool) { return state, strings.HasPrefix(id, "saved-") },
		Track:   tracked(),
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Shutdown()
	call := func(b *testing.B, sid string) {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nop","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(HeaderSessionID, sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var buf [4096]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", sid, resp.StatusCode)
		}
	}
	b.Run("live", func(b *testing.B) {
		call(b, "saved-live")
		for b.Loop() {
			call(b, "saved-live")
		}
	})
	b.Run("restored", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			sid := fmt.Sprintf("saved-%d", i)
			call(b, sid)
			b.StopTimer()
			h.Close(sid) // keep the table small, out of the timing
			b.StartTimer()
		}
	})
}
