package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/berth-dev/berth/broker/outbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionBook is what a mount knows of each session of its server: its
// transport (from the context of its first request, or as it connects for
// the WebSocket and streamable HTTP transports), its id, and what it is
// doing, which makes it busy or idle (limits.go). A session leaves the
// book when it ends.
type sessionBook struct {
	log *slog.Logger

	mu sync.Mutex // guards by, quietAt, emptied and every *session in it
	by map[*mcp.ServerSession]*session
	// quietAt is when a network session last ended a request or ended
	// (inuse.go): what holds its project past mount_grace.
	quietAt time.Time
	// emptied, while wait waits, is closed by the goroutine that removes
	// the book's last session.
	emptied chan struct{}
	// ended, while a newcomer waits for a place (limits.room), is closed
	// when a request of a session ends or a session leaves the book.
	ended chan struct{}
}

// session is one session's entry in the book.
type session struct {
	ss *mcp.ServerSession
	tr *transport // nil while unknown: an SSE session that has sent nothing
	id string     // Mcp-Session-Id on /mcp, else one the broker makes
	// started is when the book first saw it; last is the latest start or
	// end of one of its requests (from started until the first), which is
	// when a saved session was last seen (sessionstore.go).
	started, last time.Time
	calls         int // MCP requests being handled
	posts, gets   int // on /mcp: POSTs in flight, GET streams open
	// idleSince is when it last stopped being busy (started at first).
	idleSince   time.Time
	admitted    bool      // counts against mcp.max_sessions (limits.go)
	admittedAt  time.Time // when it was
	initialized bool      // its notifications/initialized was seen
	// used is set by its first request past the handshake (anything but
	// initialize and notifications/initialized, a GET stream included).
	used bool
	// out counts what its streams lost to its reading slowly; nil until
	// its first request (a transport without queues has none).
	out *outbox.Stats
}

func newSessionBook(log *slog.Logger) *sessionBook {
	return &sessionBook{log: log, by: make(map[*mcp.ServerSession]*session)}
}

// wait returns once the goroutine watching each session of the book has
// seen it end and removed it, or when ctx is done (a session connected
// after its caller closed them all). The caller closes the sessions first.
func (b *sessionBook) wait(ctx context.Context) {
	b.mu.Lock()
	if len(b.by) == 0 {
		b.mu.Unlock()
		return
	}
	if b.emptied == nil {
		b.emptied = make(chan struct{})
	}
	emptied := b.emptied
	b.mu.Unlock()
	select {
	case <-emptied:
	case <-ctx.Done():
	}
}

// entryLocked is ss's entry, added when missing; its transport is tr when
// known. The entry is removed when ss ends.
func (b *sessionBook) entryLocked(ss *mcp.ServerSession, tr *transport, now time.Time) *session {
	s := b.by[ss]
	if s == nil {
		s = &session{ss: ss, id: ss.ID(), started: now, last: now, idleSince: now}
		if s.id == "" {
			s.id = newSessionID()
		}
		b.by[ss] = s
		go func() {
			_ = ss.Wait()
			b.mu.Lock()
			delete(b.by, ss)
			b.quietLocked(s, time.Now())
			b.signalEndedLocked()
			if len(b.by) == 0 && b.emptied != nil {
				close(b.emptied)
				b.emptied = nil
			}
			b.mu.Unlock()
		}()
	}
	if s.tr == nil {
		s.tr = tr
	}
	return s
}

// tag records ss's transport; the first one known stays.
func (b *sessionBook) tag(ss *mcp.ServerSession, tr *transport) {
	if ss == nil || tr == nil {
		return
	}
	b.mu.Lock()
	b.entryLocked(ss, tr, time.Now())
	b.mu.Unlock()
}

// of is ss's transport, or nil while it is unknown.
func (b *sessionBook) of(ss *mcp.ServerSession) *transport {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.by[ss]; s != nil {
		return s.tr
	}
	return nil
}

// busyLocked reports whether s may not be evicted: a session of the IDE or
// of a stream transport (its connection is the session), or of unknown
// transport, or one on /mcp with a request in flight or a GET stream open.
func (s *session) busyLocked() bool {
	return s.heldLocked() || s.posts > 0 || s.calls > 0
}

// heldLocked reports whether s is busy beyond its requests in flight: for
// as long as its connection or a GET stream is open (or its transport is
// unknown). A session busy but not held becomes idle when its requests end.
func (s *session) heldLocked() bool {
	return s.tr == nil || s.tr.ide || s.tr.stream || s.gets > 0
}

// What a request of a session is, for the counts that make it busy.
type requestKind int

const (
	mcpRequest requestKind = iota // a message being handled (every transport)
	httpPost                      // a POST on /mcp being answered
	httpGet                       // a GET stream open on /mcp
)

// beginLocked and endLocked bracket one request of s, at now.
func (b *sessionBook) beginLocked(s *session, kind requestKind, now time.Time) {
	s.last = now
	*s.count(kind)++
}

func (b *sessionBook) endLocked(s *session, kind requestKind, now time.Time) {
	s.last = now
	*s.count(kind)--
	if !s.busyLocked() {
		s.idleSince = now
	}
	b.quietLocked(s, now)
	b.signalEndedLocked()
}

// endedLocked is a channel closed at the next end of a request or of a
// session.
func (b *sessionBook) endedLocked() <-chan struct{} {
	if b.ended == nil {
		b.ended = make(chan struct{})
	}
	return b.ended
}

func (b *sessionBook) signalEndedLocked() {
	if b.ended != nil {
		close(b.ended)
		b.ended = nil
	}
}

func (s *session) count(kind requestKind) *int {
	switch kind {
	case httpPost:
		return &s.posts
	case httpGet:
		return &s.gets
	default:
		return &s.calls
	}
}

// track records a request of ss on /mcp as it starts (stream: a GET); the
// returned func records its end. It is the streamable handler's Track.
func (b *sessionBook) track(tr *transport) func(ss *mcp.ServerSession, stream bool) func() {
	return func(ss *mcp.ServerSession, stream bool) func() {
		kind := httpPost
		if stream {
			kind = httpGet
		}
		b.mu.Lock()
		s := b.entryLocked(ss, tr, time.Now())
		s.used = s.used || stream
		b.beginLocked(s, kind, time.Now())
		b.mu.Unlock()
		return func() {
			b.mu.Lock()
			b.endLocked(s, kind, time.Now())
			b.mu.Unlock()
		}
	}
}

// middleware tags the session of every request with its context's
// transport, counts the requests it is handling, and drops a repeated
// notifications/initialized before the SDK sees it (the SDK logs each one
// as an error; a client that floods them would flood the log).
func (b *sessionBook) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok || ss == nil {
			return next(ctx, method, req)
		}
		tr := transportOf(ctx)
		b.mu.Lock()
		s := b.entryLocked(ss, tr, time.Now())
		if s.out == nil {
			if s.out = outbox.StatsOf(ctx); s.out != nil && ss.ID() == "" {
				s.out.SetLabel(s.id) // the queue's log lines name the session as berth clients does
			}
		}
		if method == "notifications/initialized" {
			if s.initialized && ss.InitializeParams() != nil {
				b.mu.Unlock()
				b.log.Warn("repeated notifications/initialized ignored", "session", s.id, "transport", transportName(ctx))
				return nil, nil
			}
			s.initialized = ss.InitializeParams() != nil
		}
		if method != "initialize" && method != "notifications/initialized" {
			s.used = true
		}
		b.beginLocked(s, mcpRequest, time.Now())
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.endLocked(s, mcpRequest, time.Now())
			b.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// newSessionID names a session whose transport has no id of its own.
func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
