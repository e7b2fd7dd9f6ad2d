package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func startHub(t *testing.T, snap func() any, o HubOptions) (*Hub, *httptest.Server) {
	t.Helper()
	h := NewHub(snap, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close(); cancel(); <-done })
	return h, srv
}

func readData(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(d)
		}
	}
}

func TestHubSendsSnapshotsOnConnectAndPoke(t *testing.T) {
	var n atomic.Int64
	h, srv := startHub(t, func() any { return map[string]int64{"n": n.Add(1)} }, HubOptions{Interval: time.Hour, MinGap: time.Millisecond})
	r, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(r.Body)
	if d := readData(t, br); d != `{"n":1}` {
		t.Fatalf("first event %s", d)
	}
	h.Poke()
	if d := readData(t, br); d != `{"n":2}` {
		t.Fatalf("after a poke %s", d)
	}
	h.Close()
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("Close should end the stream cleanly: %v", err)
	}
	if r2, err := http.Get(srv.URL); err != nil || r2.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a client after Close: %v %v", r2, err)
	}
}

func TestHubDropsAClientThatStopsReading(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // 1 MiB per event fills the socket buffers fast
	h, srv := startHub(t, func() any { return big }, HubOptions{Interval: time.Hour, MinGap: time.Millisecond, Buffer: 2, WriteTimeout: time.Minute})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	for i := 0; h.count() == 0; i++ { // wait for the client to register
		if i == 1000 {
			t.Fatal("the client never registered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Never read: pokes queue up until the hub gives up on the client.
	for i := 0; h.count() > 0; i++ {
		if i == 2000 {
			t.Fatal("a client that never reads was never dropped")
		}
		h.Poke()
		time.Sleep(5 * time.Millisecond)
	}
}

func TestASnapshotThatPokesDoesNotLoop(t *testing.T) {
	var h *Hub
	var builds atomic.Int64
	h, srv := startHub(t, func() any { builds.Add(1); h.Poke(); return "x" }, HubOptions{Interval: time.Hour, MinGap: time.Millisecond})
	r, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	readData(t, bufio.NewReader(r.Body))
	time.Sleep(300 * time.Millisecond) // a loop would build a snapshot every millisecond
	if n := builds.Load(); n > 5 {
		t.Fatalf("%d snapshots built for one client and no change", n)
	}
}
