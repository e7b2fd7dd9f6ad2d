// Package outbox sends a session's outgoing messages from one goroutine
// per connection or stream, so that whoever sends them (the engine's log,
// a hosted server's relay, the SDK's notifications) never waits for a
// client that reads slowly, and a client that stops reading costs a
// bounded amount of memory.
//
// A Queue holds at most Max bytes not yet written. Past that, a
// notification is dropped (and counted), and anything else (an answer, a
// request of the server) cuts the connection: the client has stopped
// reading what it asked for. A list_changed notification already waiting
// is not queued again: one tells the client all it needs. A write that
// makes no progress for WriteTimeout cuts the connection too.
//
// Every transport uses it: Stream wraps the response of an SSE stream (a
// GET stream of /mcp, a legacy /sse session), and mcpws queues its
// WebSocket frames. Stats counts what a session lost, for the log and
// `berth clients`.
package outbox

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of every queue.
const (
	// Max is the most bytes a queue holds unwritten (one message larger
	// than that is still queued when the queue is empty).
	Max = 1 << 20
	// WriteTimeout is the longest one write may take.
	WriteTimeout = 30 * time.Second
)

// ErrCut is what Put returns once the queue was cut or closed.
var ErrCut = errors.New("outbox: the connection was cut: the client stopped reading")

// Stats counts what one session lost to a slow reader, over all its
// streams; its zero value is ready. The session book reads it for
// `berth clients`.
type Stats struct {
	dropped atomic.Int64
	cuts    atomic.Int64
	label   atomic.Pointer[string]
}

// Dropped is how many notifications were dropped.
func (s *Stats) Dropped() int64 { return s.dropped.Load() }

// Cuts is how many connections or streams were cut.
func (s *Stats) Cuts() int64 { return s.cuts.Load() }

// SetLabel names the session in the log lines of its queues.
func (s *Stats) SetLabel(id string) { s.label.Store(&id) }

func (s *Stats) name() string {
	if p := s.label.Load(); p != nil {
		return *p
	}
	return ""
}

type statsKey struct{}

// WithStats tags ctx (the one a session is connected with) with its Stats.
func WithStats(ctx context.Context, s *Stats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

// StatsOf is the Stats ctx was tagged with, or nil.
func StatsOf(ctx context.Context) *Stats {
	s, _ := ctx.Value(statsKey{}).(*Stats)
	return s
}

// Options configure a Queue.
type Options struct {
	// Send writes one message to the client, within the context's deadline;
	// it is called from the queue's goroutine only.
	Send func(ctx context.Context, p []byte) error
	// Cut ends the connection (called once, from any goroutine).
	Cut   func()
	Stats *Stats // nil: counted nowhere
	Log   *slog.Logger
}

// Queue is one connection's outgoing messages.
type Queue struct {
	opts Options
	wake chan struct{} // cap 1: something was queued, or the queue closed
	done chan struct{} // closed when the goroutine returns

	mu       sync.Mutex // guards the fields below
	items    []item
	bytes    int
	closed   bool // no more Puts; the goroutine sends what is queued and returns
	cut      bool // cut: the goroutine returns at once
	dropping bool // in a run of drops (logged once per run)
}

type item struct {
	p    []byte
	note bool   // a notification: may be dropped
	key  string // a list_changed method: one queued at a time
}

// New starts a queue.
func New(opts Options) *Queue {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Stats == nil {
		opts.Stats = &Stats{}
	}
	q := &Queue{opts: opts, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// Put queues p, a whole message (or an SSE event); it never waits for the
// client. It returns ErrCut once the queue is cut or closed.
func (q *Queue) Put(p []byte) error {
	note, key := classify(p)
	q.mu.Lock()
	if q.closed || q.cut {
		q.mu.Unlock()
		return ErrCut
	}
	if key != "" {
		for _, it := range q.items {
			if it.key == key {
				q.mu.Unlock()
				return nil // the one waiting says it
			}
		}
	}
	switch {
	case note && q.bytes > 0 && q.bytes+len(p) > Max:
		q.opts.Stats.dropped.Add(1)
		first := !q.dropping
		q.dropping = true
		queued := q.bytes
		q.mu.Unlock()
		if first {
			q.opts.Log.Warn("MCP session reads too slowly: its notifications are dropped until it catches up",
				"session", q.opts.Stats.name(), "queued_bytes", queued)
		}
		return nil
	case !note && q.bytes > Max:
		queued := q.bytes
		q.mu.Unlock()
		q.cutOff("answers unread", queued)
		return ErrCut
	}
	q.items = append(q.items, item{p: bytes.Clone(p), note: note, key: key})
	q.bytes += len(p)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// cutOff cuts the queue (once): what is queued is dropped and the
// connection ended.
func (q *Queue) cutOff(why string, queued int) {
	q.mu.Lock()
	if q.cut {
		q.mu.Unlock()
		return
	}
	q.cut = true
	q.items, q.bytes = nil, 0
	q.mu.Unlock()
	q.opts.Stats.cuts.Add(1)
	q.opts.Log.Warn("MCP session cut off: it stopped reading", "session", q.opts.Stats.name(), "why", why, "queued_bytes", queued)
	select {
	case q.wake <- struct{}{}:
	default:
	}
	if q.opts.Cut != nil {
		q.opts.Cut()
	}
}

func (q *Queue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed && !q.cut {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.cut || len(q.items) == 0 { // cut, or closed and sent
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = item{}
		q.items = q.items[1:]
		q.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
		err := q.opts.Send(ctx, it.p)
		cancel()
		q.mu.Lock()
		q.bytes -= len(it.p)
		if len(q.items) == 0 {
			q.dropping = false
		}
		q.mu.Unlock()
		if err != nil {
			q.mu.Lock()
			stopped := q.cut
			q.mu.Unlock()
			if stopped {
				return // cut or stopped meanwhile: the write was abandoned
			}
			why := "a write failed"
			if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
				why = "a write made no progress for " + WriteTimeout.String()
			}
			q.cutOff(why, 0)
			return
		}
	}
}

// Stop drops what is queued and stops taking messages, without waiting:
// the connection is being closed.
func (q *Queue) Stop() {
	q.mu.Lock()
	q.closed, q.cut = true, true
	q.items, q.bytes = nil, 0
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Close stops taking messages and waits until what is queued is written
// (each write within WriteTimeout) or the queue is cut.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// classify tells a notification from other messages, as the go-sdk
// encodes them (jsonrpc, then an id when there is one, then the method),
// in a JSON-RPC message or the data of an SSE event; key is the method of
// a list_changed notification.
func classify(p []byte) (note bool, key string) {
	if i := bytes.Index(p, []byte("data: ")); i >= 0 && !bytes.HasPrefix(p, []byte("{")) {
		p = p[i+len("data: "):]
	}
	rest, ok := bytes.CutPrefix(p, []byte(`{"jsonrpc":"2.0","method":"`))
	if !ok {
		return false, ""
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return false, ""
	}
	method := string(rest[:end])
	if bytes.HasSuffix(rest[:end], []byte("/list_changed")) {
		return true, method
	}
	return true, ""
}
