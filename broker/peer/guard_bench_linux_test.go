package peer

import (
	"io"
	"net"
	"net/http"
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
