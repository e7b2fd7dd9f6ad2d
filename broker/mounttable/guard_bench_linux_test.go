package mounttable

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// BenchmarkProjectPortGuard is the account check's cost on a real project
// port: a mounted project's port (guarded, as the broker serves it) and
// the same handler served unguarded on a second loopback port, in the
// same run. Each request is an MCP ping on one open streamable-HTTP
// session. per-connection opens a new TCP connection for every request
// (the guard asks the kernel each time); per-request reuses one
// connection per port (the guard asked once, before the timer). Each
// iteration sends one request to each port, in alternating order, so that
// the load of a shared machine falls on both alike; the metrics are each
// port's time per request and their ratio (ns/op counts both requests).
func BenchmarkProjectPortGuard(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := testMount(b, ctx, nil)
	defer m.shutdown(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	plain := &http.Server{Handler: m.handler, ReadHeaderTimeout: 10 * time.Second}
	go plain.Serve(ln)
	defer plain.Close()
	guarded, baseline := m.url(), "http://"+ln.Addr().String()+"/mcp"
	sid := benchSession(b, guarded)
	for _, kind := range []string{"per-connection", "per-request"} {
		b.Run(kind, func(b *testing.B) {
			reuse := kind == "per-request"
			client := func() *http.Client {
				return &http.Client{Transport: &http.Transport{DisableKeepAlives: !reuse}}
			}
			gc, bc := client(), client()
			defer gc.CloseIdleConnections()
			defer bc.CloseIdleConnections()
			ping(b, gc, guarded, sid, 0, false)
			ping(b, bc, baseline, sid, 0, false)
			var tg, tb time.Duration
			n := 0
			timed := func(c *http.Client, url string, id int) time.Duration {
				start := time.Now()
				ping(b, c, url, sid, id, reuse)
				return time.Since(start)
			}
			for b.Loop() {
				n++
				if n%2 == 0 {
					tg += timed(gc, guarded, 2*n)
					tb += timed(bc, baseline, 2*n+1)
				} else {
					tb += timed(bc, baseline, 2*n+1)
					tg += timed(gc, guarded, 2*n)
				}
			}
			b.ReportMetric(float64(tb.Nanoseconds())/float64(n), "baseline-ns/req")
			b.ReportMetric(float64(tg.Nanoseconds())/float64(n), "guard-ns/req")
			b.ReportMetric(float64(tg)/float64(tb), "guard/baseline")
		})
	}
}

// benchSession initializes a streamable-HTTP session and returns its id.
func benchSession(b *testing.B, url string) string {
	b.Helper()
	resp := post(context.Background(), b, http.DefaultClient.Do, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatal("initialize: no session id")
	}
	post(context.Background(), b, http.DefaultClient.Do, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// ping sends an MCP ping on session sid and checks that the connection
// was reused (reuse) or new (!reuse).
func ping(b *testing.B, c *http.Client, url, sid string, id int, reuse bool) {
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	resp := post(ctx, b, c.Do, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	if resp.StatusCode != http.StatusOK || reused != reuse {
		b.Fatalf("ping: %d, connection reused %v, want %v", resp.StatusCode, reused, reuse)
	}
}

// post sends one JSON-RPC message and reads the whole answer.
func post(ctx context.Context, b *testing.B, do func(*http.Request) (*http.Response, error), url, sid, body string) *http.Response {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b.Fatalf("%s: %d", body, resp.StatusCode)
	}
	return resp
}
