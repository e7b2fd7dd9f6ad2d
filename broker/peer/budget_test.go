package peer

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// closedWithin reports whether the server closes c (a read ends) within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	ne, timeout := err.(net.Error)
	return !(timeout && ne.Timeout())
}

// TestBudgetBoundsConnectionsNotKnownToBeTheOwners: idle connections of
// another account are held up to the budget; past it, each new one is
// looked up as it is accepted and closed at once, while the owner's are
// served; a place freed is taken again; the owner's connections never
// count once known; one log line says what was closed.
func TestBudgetBoundsConnectionsNotKnownToBeTheOwners(t *testing.T) {
	var logs logBuf
	g, lookups := fakeGuard("", &logs, 0, nil)
	var peerUID atomic.Uint32
	peerUID.Store(1001)
	g.owner = 1000
	g.lookup = func(net.Conn) (uint32, error) { lookups.Add(1); return peerUID.Load(), nil }
	g.budget = NewBudget(3)
	srv := &http.Server{Handler: hello, ReadHeaderTimeout: 10 * time.Second}
	g.Install(srv)
	ln := listenLoopback(t)
	url := serve(t, srv, g.Listener(ln))
	addr := ln.Addr().String()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	waitInUse := func(n int) {
		t.Helper()
		if !brokertest.Poll(brokertest.WaitLimit, func() bool { return g.budget.InUse() == n }) {
			t.Fatalf("budget in use %d, want %d", g.budget.InUse(), n)
		}
	}

	idle := []net.Conn{dial(), dial(), dial()}
	waitInUse(3)
	if n := lookups.Load(); n != 0 {
		t.Fatalf("%d lookups for connections within the budget, want none before their first request", n)
	}
	if !closedWithin(dial(), 5*time.Second) {
		t.Fatal("a connection past the budget was kept open")
	}
	for _, c := range idle {
		if closedWithin(c, 50*time.Millisecond) {
			t.Fatal("a connection within the budget was closed")
		}
	}
	// The owner is served past the budget, and its connection does not count.
	peerUID.Store(1000)
	owner := &http.Client{Transport: &http.Transport{}}
	defer owner.CloseIdleConnections()
	if code, body := get(t, owner, url, ""); code != http.StatusOK || body != "secret data" {
		t.Fatalf("the owner past the budget: %d %q", code, body)
	}
	waitInUse(3)
	peerUID.Store(1001)
	// A place freed is taken again; the newcomer's request is refused and
	// its connection closed at once, its stalled body unread.
	idle[0].Close()
	waitInUse(2)
	c := dial()
	waitInUse(3)
	io.WriteString(c, "POST /projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !closedWithin(c, 2*time.Second) {
		t.Fatalf("a refused request with a stalled body: %d, and its connection was not closed at once", resp.StatusCode)
	}
	waitInUse(2)
	if l := logs.lines("closed new connections at once"); len(l) != 1 || l[0]["closed"] != float64(1) || l[0]["peer_uid"] != float64(1001) {
		t.Fatalf("log lines about closed connections: %v", l)
	}
}

// TestAdmittedHearsOfAdmittedConnectionsOnly: the Admitted hook hears of
// the owner's connection once, however many requests it carries, and
// never of a refused one.
func TestAdmittedHearsOfAdmittedConnectionsOnly(t *testing.T) {
	var logs logBuf
	g, _ := fakeGuard("", &logs, 0, nil)
	g.owner = 1000
	var peerUID atomic.Uint32
	peerUID.Store(1000)
	g.lookup = func(net.Conn) (uint32, error) { return peerUID.Load(), nil }
	var admitted atomic.Int32
	g.admitted = func(net.Conn) { admitted.Add(1) }
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for range 3 {
		get(t, c, url, "")
	}
	if n := admitted.Load(); n != 1 {
		t.Fatalf("Admitted heard %d times of one connection, want 1", n)
	}
	peerUID.Store(1001)
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	code, body := get(t, fresh, url, "")
	wantRefused(t, code, body)
	if n := admitted.Load(); n != 1 {
		t.Fatalf("Admitted heard of a refused connection (%d calls)", n)
	}
}
