package outbox

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Stream is the http.ResponseWriter of an SSE response whose writes go
// through a Queue: the handler's writes return at once, and the queue's
// goroutine writes and flushes each one. A stream that is cut is ended:
// its Context is cancelled, so that the handler returns.
type Stream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	q      *Queue
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex // guards status
	status int        // from WriteHeader; 0 = 200 at the first write
	sent   bool       // the status went out (the queue's goroutine, then Close)
}

// NewStream wraps w, the response to r. Serve the request with the
// returned Stream and r.WithContext(s.Context()), then call Close.
func NewStream(w http.ResponseWriter, r *http.Request, stats *Stats, log *slog.Logger) *Stream {
	ctx, cancel := context.WithCancel(r.Context())
	s := &Stream{w: w, rc: http.NewResponseController(w), ctx: ctx, cancel: cancel}
	s.q = New(Options{Send: s.send, Cut: s.cut, Stats: stats, Log: log})
	return s
}

// Context is the request's context, cancelled when the stream is cut.
func (s *Stream) Context() context.Context { return s.ctx }

// cut ends the stream: its handler returns, and a write under way fails now.
func (s *Stream) cut() {
	s.cancel()
	_ = s.rc.SetWriteDeadline(time.Now())
}

// send writes p and flushes it, within ctx's deadline (the queue's goroutine).
func (s *Stream) send(ctx context.Context, p []byte) error {
	s.writeStatus()
	if dl, ok := ctx.Deadline(); ok {
		_ = s.rc.SetWriteDeadline(dl)
	}
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *Stream) writeStatus() {
	if s.sent {
		return
	}
	s.sent = true
	s.mu.Lock()
	status := s.status
	s.mu.Unlock()
	if status != 0 {
		s.w.WriteHeader(status)
	}
}

// Header is the response's header, to set before the first write.
func (s *Stream) Header() http.Header { return s.w.Header() }

// WriteHeader records the status; it leaves with the first write.
func (s *Stream) WriteHeader(status int) {
	s.mu.Lock()
	if s.status == 0 {
		s.status = status
	}
	s.mu.Unlock()
}

// Write queues p; it fails once the stream is cut.
func (s *Stream) Write(p []byte) (int, error) {
	if err := s.q.Put(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush does nothing: every write is flushed as it leaves the queue.
func (s *Stream) Flush() {}

// FlushError is Flush for http.ResponseController.
func (s *Stream) FlushError() error { return nil }

// Close writes what is queued (each write within WriteTimeout), then
// leaves the response to its handler's caller.
func (s *Stream) Close() {
	s.q.Close()
	s.writeStatus()
	_ = s.rc.SetWriteDeadline(time.Time{})
	s.cancel()
}
