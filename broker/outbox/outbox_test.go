package outbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func note(method string, i int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":{"n":%d,"pad":%q}}`, method, i, strings.Repeat("x", 1000))
}

func answer(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"pad":%q}}`, id, strings.Repeat("y", 1000))
}

// gated is a Send that blocks until release is closed, counting what it sent.
type gated struct {
	release chan struct{}
	sent    atomic.Int64
}

func (g *gated) send(ctx context.Context, p []byte) error {
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.sent.Add(1)
	return nil
}

// TestSlowReaderLosesNotificationsNotAnswers: while the client reads
// nothing, notifications past Max are dropped and counted, and a
// list_changed already waiting is not queued twice; answers are queued
// until more than Max waits, and the next cuts the connection. Put never
// waits for the client.
func TestSlowReaderLosesNotificationsNotAnswers(t *testing.T) {
	g := &gated{release: make(chan struct{})}
	stats := &Stats{}
	var cut atomic.Int32
	q := New(Options{Send: g.send, Cut: func() { cut.Add(1) }, Stats: stats})
	defer q.Stop()
	n := 3 * Max / 1000
	for i := range n {
		if err := q.Put(note("notifications/message", i)); err != nil {
			t.Fatal(err)
		}
		if err := q.Put(note("notifications/tools/list_changed", i)); err != nil {
			t.Fatal(err)
		}
	}
	// About Max bytes of log messages are kept, the rest dropped; the
	// list_changed after the first are not queued (nor counted).
	if d, kept := stats.Dropped(), int64(Max/len(note("notifications/message", 0))); d < int64(n)-kept-5 || d > int64(n)-kept+5 {
		t.Fatalf("dropped %d of %d log messages, want all but the %d that fit", d, n, kept)
	}
	q.mu.Lock()
	lists := 0
	for _, it := range q.items {
		if it.key != "" {
			lists++
		}
	}
	queued := q.bytes
	q.mu.Unlock()
	if lists != 1 || queued > Max+2000 {
		t.Fatalf("%d list_changed queued, %d bytes", lists, queued)
	}
	var err error
	for i := 0; i < 2*Max/1000 && err == nil; i++ {
		err = q.Put(answer(i))
	}
	if err != ErrCut || cut.Load() != 1 || stats.Cuts() != 1 {
		t.Fatalf("answers past the bound: %v, cut %d times (stats %d)", err, cut.Load(), stats.Cuts())
	}
	if err := q.Put(answer(0)); err != ErrCut {
		t.Fatalf("a Put after the cut: %v", err)
	}
}

// TestQueueSendsInOrderAndCloseWaits: what is queued leaves in order, and
// Close returns once it has.
func TestQueueSendsInOrderAndCloseWaits(t *testing.T) {
	var got []string
	q := New(Options{Send: func(_ context.Context, p []byte) error { got = append(got, string(p)); return nil }})
	for i := range 100 {
		if err := q.Put(answer(i)); err != nil {
			t.Fatal(err)
		}
	}
	q.Close()
	if len(got) != 100 || got[0] != string(answer(0)) || got[99] != string(answer(99)) {
		t.Fatalf("sent %d", len(got))
	}
}

// TestStreamCutsAClientThatStopsReading serves an SSE stream through a
// Stream to a client that reads nothing: the handler keeps writing
// answers without ever waiting, the stream is cut once they pile up, and
// the handler's context ends.
func TestStreamCutsAClientThatStopsReading(t *testing.T) {
	stats := &Stats{}
	ended := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := NewStream(w, r, stats, nil)
		defer st.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		st.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(st, "event: message\ndata: %s\n\n", answer(i)); err != nil {
				ended <- st.Context().Err()
				return
			}
		}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	select {
	case err := <-ended:
		if err == nil || stats.Cuts() != 1 {
			t.Fatalf("the handler stopped with its context %v, cuts %d", err, stats.Cuts())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream was not cut within 20s")
	}
}
