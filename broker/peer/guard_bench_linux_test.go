package peer

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkLookup is the cost of one owner lookup of a held loopback
// connection, by each method. /proc's cost grows with the number of
// sockets on the machine; netlink's does not.
func BenchmarkLookup(b *testing.B) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	local := server.LocalAddr().(*net.TCPAddr).AddrPort()
	remote := server.RemoteAddr().(*net.TCPAddr).AddrPort()
	b.Run("netlink", func(b *testing.B) {
		for b.Loop() {
			if _, err := sockDiag(remote, local); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, err := procLookup(remote, local); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGuard measures a loopback HTTP server with and without the
// guard, in the same run: per connection (a new connection per request:
// the guard's lookup runs every time) and per request (one keep-alive
// connection: the lookup ran once, before the timer).
func BenchmarkGuard(b *testing.B) {
	servers := map[string]string{}
	for _, mode := range []string{"baseline", "guard"} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: hello, ReadHeaderTimeout: 10 * time.Second}
		if mode == "guard" {
			NewGuard(Options{}).Install(srv)
		}
		go srv.Serve(ln)
		defer srv.Close()
		servers[mode] = "http://" + ln.Addr().String() + "/"
	}
	run := func(b *testing.B, c *http.Client, url string) {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	for _, kind := range []string{"per-connection", "per-request"} {
		for _, mode := range []string{"baseline", "guard"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				tr := &http.Transport{DisableKeepAlives: kind == "per-connection"}
				defer tr.CloseIdleConnections()
				c := &http.Client{Transport: tr}
				run(b, c, servers[mode])
				for b.Loop() {
					run(b, c, servers[mode])
				}
			})
		}
	}
}

// BenchmarkGuardHandler isolates the guard's own cost from the network:
// the handler alone, the guarded handler on a connection already looked
// up (every request after the first), and the guarded handler on a new
// connection (ConnContext and a real netlink lookup of a held loopback
// connection).
func BenchmarkGuardHandler(b *testing.B) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	g := NewGuard(Options{})
	guarded := g.Wrap(hello)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	serve := func(b *testing.B, h http.Handler, r *http.Request) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.Run("request/baseline", func(b *testing.B) {
		for b.Loop() {
			serve(b, hello, req)
		}
	})
	b.Run("request/guard", func(b *testing.B) {
		r := req.WithContext(g.ConnContext(context.Background(), server))
		serve(b, guarded, r)
		for b.Loop() {
			serve(b, guarded, r)
		}
	})
	b.Run("connection/guard", func(b *testing.B) {
		for b.Loop() {
			serve(b, guarded, req.WithContext(g.ConnContext(context.Background(), server)))
		}
	})
}
