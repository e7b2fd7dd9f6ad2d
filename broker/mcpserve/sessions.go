package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/outbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Book is what a mount knows of each session of its server: its
// transport (from the context of its first request, or as it connects for
// the WebSocket and streamable HTTP transports), its id, and what it is
// doing, which makes it busy or idle (Limits). A session leaves the
// book when it ends.
type Book struct {
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
	admitted    bool      // counts against mcp.max_sessions (Limits)
	admittedAt  time.Time // when it was
	initialized bool      // its notifications/initialized was seen
	// used is set by its first request past the handshake (anything but
	// initialize and notifications/initialized, a GET stream included).
	used bool
	// out counts what its streams lost to its reading slowly; nil until
	// its first request (a transport without queues has none).
	out *outbox.Stats
}

func NewBook(log *slog.Logger) *Book {
	return &Book{log: log, by: make(map[*mcp.ServerSession]*session)}
}

// Wait returns once the goroutine watching each session of the book has
// seen it end and removed it, or when ctx is done (a session connected
// after its caller closed them all). The caller closes the sessions first.
func (b *Book) Wait(ctx context.Context) {
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
func (b *Book) entryLocked(ss *mcp.ServerSession, tr *transport, now time.Time) *session {
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
func (b *Book) tag(ss *mcp.ServerSession, tr *transport) {
	if ss == nil || tr == nil {
		return
	}
	b.mu.Lock()
	b.entryLocked(ss, tr, time.Now())
	b.mu.Unlock()
}

// Transport is the name of ss's transport, "" while it is unknown.
func (b *Book) Transport(ss *mcp.ServerSession) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.by[ss]; s != nil && s.tr != nil {
		return s.tr.name
	}
	return ""
}

// ConnectedHTTP enters ss as a streamable HTTP session as it connects.
// One restored after a restart is entered as initialized and used (it
// was, before the restart); the caller admits it (Limits.Admit).
func (b *Book) ConnectedHTTP(ss *mcp.ServerSession, restored bool) {
	tr := transportNamed(TransportHTTP)
	b.tag(ss, tr)
	if !restored || ss == nil {
		return
	}
	b.mu.Lock()
	s := b.entryLocked(ss, tr, time.Now())
	s.initialized, s.used = true, true
	b.mu.Unlock()
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
func (b *Book) beginLocked(s *session, kind requestKind, now time.Time) {
	s.last = now
	*s.count(kind)++
}

func (b *Book) endLocked(s *session, kind requestKind, now time.Time) {
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
func (b *Book) endedLocked() <-chan struct{} {
	if b.ended == nil {
		b.ended = make(chan struct{})
	}
	return b.ended
}

func (b *Book) signalEndedLocked() {
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

// TrackHTTP records a request of ss on /mcp as it starts (stream: a GET);
// the returned func records its end. It is the streamable handler's Track.
func (b *Book) TrackHTTP() func(ss *mcp.ServerSession, stream bool) func() {
	return b.track(transportNamed(TransportHTTP))
}

func (b *Book) track(tr *transport) func(ss *mcp.ServerSession, stream bool) func() {
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

// Middleware tags the session of every request with its context's
// transport, counts the requests it is handling, and drops a repeated
// notifications/initialized before the SDK sees it (the SDK logs each one
// as an error; a client that floods them would flood the log).
func (b *Book) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
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
				b.log.Warn("repeated notifications/initialized ignored", "session", s.id, "transport", TransportName(ctx))
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

// The reads and writes of the session rule (limits.go) and the other
// users of the book: each takes the book's lock itself, so that no other
// file takes it or reads its map.

// evictableLocked reports whether s may be ended for a newcomer at now:
// idle, and past its handshake (or its handshakeGrace); else, for an idle
// one in its handshake, how long until it is.
func (s *session) evictableLocked(now time.Time) (bool, time.Duration) {
	if s.busyLocked() {
		return false, 0
	}
	if age := now.Sub(s.admittedAt); !s.used && age < handshakeGrace {
		return false, handshakeGrace - age
	}
	return true, 0
}

// places is what a newcomer finds at a moment.
type places struct {
	admitted int           // sessions counted against mcp.max_sessions
	victim   *session      // the evictable one idle longest; nil for none
	wait     time.Duration // with no victim, until one in its handshake may be evicted (0: none)
	// finishing: an admitted session is busy only with requests in
	// flight (no stream open), so it becomes evictable when they end.
	finishing bool
	ended     <-chan struct{} // closed at the next end of a request or a session
}

// places counts the admitted sessions at now and finds the victim.
func (b *Book) places(now time.Time) places {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.scanLocked(now)
	for _, s := range b.by {
		if s.admitted && s.busyLocked() && !s.heldLocked() {
			p.finishing = true
			break
		}
	}
	p.ended = b.endedLocked()
	return p
}

// scanLocked is places without finishing and ended.
func (b *Book) scanLocked(now time.Time) places {
	var p places
	for _, s := range b.by {
		if !s.admitted {
			continue
		}
		p.admitted++
		ok, w := s.evictableLocked(now)
		switch {
		case ok && (p.victim == nil || s.idleSince.Before(p.victim.idleSince)):
			p.victim = s
		case w > 0 && (p.wait == 0 || w < p.wait):
			p.wait = w
		}
	}
	return p
}

// eviction is a session that gave its place to a newcomer, for the caller
// to end and log once the book's lock is released.
type eviction struct {
	ss        *mcp.ServerSession
	id        string
	transport string
	idle      time.Duration
}

// takePlace counts ss (entered when new) among the admitted sessions, of
// which there may be maxSessions (0: no limit). When they are all taken,
// the evictable one idle longest gives its place (ev, for the caller to
// end); when none is evictable, ss is not admitted and full says what it
// found. A session already admitted keeps its place.
func (b *Book) takePlace(ss *mcp.ServerSession, now time.Time, maxSessions int) (ev *eviction, full *places) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.entryLocked(ss, nil, now)
	if s.admitted {
		return nil, nil
	}
	if maxSessions > 0 {
		if p := b.scanLocked(now); p.admitted >= maxSessions {
			if p.victim == nil {
				return nil, &p
			}
			v := p.victim
			v.admitted = false
			ev = &eviction{ss: v.ss, id: v.id, idle: now.Sub(v.idleSince)}
			if v.tr != nil {
				ev.transport = v.tr.name
			}
		}
	}
	s.admitted, s.admittedAt = true, now
	return ev, nil
}

// giveBack gives ss's place back (its handshake failed).
func (b *Book) giveBack(ss *mcp.ServerSession) {
	b.mu.Lock()
	if s := b.by[ss]; s != nil {
		s.admitted = false
	}
	b.mu.Unlock()
}

// visit calls f, with the book's lock held, with the entries of every
// session of srv; those the book has not seen yet (an SSE stream that has
// sent nothing) are entered at now, so that their time counts from then.
func (b *Book) visit(srv *mcp.Server, now time.Time, f func(all []*session)) {
	sessions := slices.Collect(srv.Sessions())
	b.mu.Lock()
	defer b.mu.Unlock()
	all := make([]*session, len(sessions))
	for i, ss := range sessions {
		all[i] = b.entryLocked(ss, nil, now)
	}
	f(all)
}

// lastSeen is the latest activity of each session, by id (sessionstore.go).
func (b *Book) lastSeen() map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	last := make(map[string]time.Time, len(b.by))
	for _, s := range b.by {
		last[s.id] = s.last
	}
	return last
}

// A session in use holds its project. When the last holder (shim or pin)
// leaves, mount_grace starts; when it ends, the mount is closed only if its
// network sessions (/mcp, /sse, /ws) are quiet too: none has a request
// in flight (an open stream alone does not count: every go-sdk and
// TypeScript client keeps a GET stream open while it does nothing), and
// the last of their requests ended (or the last of them ended) at
// least mount_grace ago. Otherwise the grace is asked again when it could
// end: mount_grace after the last request, or a whole mount_grace later
// while one is busy. So a sub-agent that keeps calling, or waits on a long
// call, keeps its project (its state file, its port) however long the IDE
// has been closed, and the project goes mount_grace after the last of
// them went quiet. session_timeout ends an idle session in its time and
// does not change this: an idle session holds nothing once its last
// request is mount_grace old. The IDE's sessions are not counted: their
// shims are holders.

// quietLocked records that s, a session of any transport but the IDE's,
// ended a request or ended at now.
func (b *Book) quietLocked(s *session, now time.Time) {
	if s.tr != nil && s.tr.ide {
		return
	}
	if now.After(b.quietAt) {
		b.quietAt = now
	}
}

// minRecheck bounds how often a busy session's mount is checked again
// (mount_grace may be 0).
const minRecheck = 100 * time.Millisecond

// HoldFor is how long from now the sessions of srv hold the mount beyond
// its holders (0: they do not): grace (at least minRecheck) while one of
// them has a request in flight, else what is left of grace since the last
// went quiet.
func (b *Book) HoldFor(srv *mcp.Server, now time.Time, grace time.Duration) (hold time.Duration) {
	b.visit(srv, now, func(all []*session) {
		for _, s := range all {
			if (s.tr == nil || !s.tr.ide) && s.inFlightLocked() {
				hold = max(grace, minRecheck)
				return
			}
		}
		hold = max(0, b.quietAt.Add(grace).Sub(now))
	})
	return hold
}

// inFlightLocked reports whether s is answering a request: a message
// being handled, or a POST on /mcp being answered.
func (s *session) inFlightLocked() bool { return s.posts > 0 || s.calls > 0 }

// eachSession calls f, with the book's lock held, for each session of srv
// that completed initialize and whose transport is known: the sessions a
// mount lists and counts. Short-lived protocol probes (such as a client's
// stateless server/discover) are not sessions.
func (b *Book) eachSession(srv *mcp.Server, f func(init *mcp.InitializeParams, s *session)) {
	all := slices.Collect(srv.Sessions())
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ss := range all {
		init := ss.InitializeParams()
		s := b.by[ss]
		if init == nil || s == nil || s.tr == nil {
			continue
		}
		f(init, s)
	}
}

// Clients lists the sessions of srv, oldest first, as `berth clients`,
// GET /projects/{id}/sessions and the dashboard show them; saved tells
// whether a streamable HTTP session is in berth.db.
func (b *Book) Clients(srv *mcp.Server, saved *Store) []api.Session {
	now := time.Now()
	var out []api.Session
	var httpIDs []int // the entries of out to ask saved about, once the book's lock is released
	b.eachSession(srv, func(init *mcp.InitializeParams, s *session) {
		c := api.Session{ID: s.id, Transport: s.tr.name, StartedAt: s.started.UTC(), State: api.SessionLive, Counted: s.admitted}
		if init.ClientInfo != nil {
			c.Client, c.ClientVersion = init.ClientInfo.Name, init.ClientInfo.Version
		}
		if !s.busyLocked() {
			c.State, c.IdleSeconds = api.SessionIdle, now.Sub(s.idleSince).Seconds()
		}
		if s.out != nil {
			c.Dropped, c.StreamsCut = s.out.Dropped(), s.out.Cuts()
		}
		if s.tr.name == TransportHTTP {
			httpIDs = append(httpIDs, len(out))
		}
		out = append(out, c)
	})
	for _, i := range httpIDs {
		out[i].Saved = saved.isSaved(out[i].ID)
	}
	if out == nil {
		out = []api.Session{}
	}
	slices.SortFunc(out, func(a, b api.Session) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// Counts are the sessions Clients lists, counted by state and by
// transport name (transports with none left out).
type Counts struct {
	Live, Idle  int
	ByTransport map[string]int
}

// Count counts the sessions of srv that Clients lists.
func (b *Book) Count(srv *mcp.Server) Counts {
	c := Counts{ByTransport: make(map[string]int, len(transports))}
	b.eachSession(srv, func(_ *mcp.InitializeParams, s *session) {
		if s.busyLocked() {
			c.Live++
		} else {
			c.Idle++
		}
		c.ByTransport[s.tr.name]++
	})
	return c
}

// Find is the session called sid, or nil.
func (b *Book) Find(sid string) *mcp.ServerSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.by {
		if s.id == sid {
			return s.ss
		}
	}
	return nil
}
