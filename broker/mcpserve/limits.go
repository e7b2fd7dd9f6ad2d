package mcpserve

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/streamable"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeBusy is the JSON-RPC error code of a request refused by a project's
// limits; the session that sent it stays open.
const CodeBusy = -32000

// The session rule (docs/configuration.md, "Sessions", says it for users):
//
//   - A network session (/mcp, /sse, /ws) is busy while it has a request in
//     flight or holds a stream open: an SSE or WebSocket session is busy for
//     as long as its connection is open (the connection is the session); a
//     streamable HTTP session while a POST is being answered or a GET stream
//     is open. Otherwise it is idle, since the end of its last request.
//   - mcp.max_sessions bounds the sessions that completed initialize. A new
//     one at the limit ends the session idle longest and takes its place;
//     the ended session's next request gets 404. A session between two
//     requests is the one idle shortest, so it is the last to go; one still
//     in its handshake (it has sent nothing but initialize and
//     notifications/initialized) is not evictable for its first
//     handshakeGrace, so that a client is never ended while it connects.
//     Only when no session is evictable is the newcomer refused: 503 with
//     a Retry-After of the seconds until a session in its handshake becomes
//     evictable, else 1 (a place frees the moment a busy session ends a
//     request or a stream, which no one can predict). While a session is
//     busy only with requests, the newcomer first waits up to finishWait
//     for one to end.
//   - With no limit (0), at most keepIdle sessions idle for idleGrace or more
//     are kept: past that, the longest idle are ended.
//   - session_timeout ends a network session that has been idle that long.
//     A busy one is never timed out: on loopback, an open connection is a
//     live client that wants its session (a dead one's sockets are closed
//     by the system), and an IDE bridge such as mcp-remote holds a GET
//     stream for hours between calls.
//   - IDE sessions (the shim's) are never counted, evicted nor timed out.
//
// There is no minimum idle time before an eviction otherwise: a client
// that runs often and never ends its sessions (most do not send DELETE)
// would be refused while its own abandoned sessions waited it out, and
// clients do not retry a 503 by themselves.
const (
	keepIdle       = 10
	idleGrace      = 5 * time.Second
	handshakeGrace = 5 * time.Second
)

// Limits enforces one project's session rule above and mcp.max_tool_calls
// (tool calls, resource reads, prompts and the requests of batches running
// at once, every session and transport together). Each
// mount has its own: a busy project never slows another.
type Limits struct {
	project     string
	maxSessions int           // 0 = no limit
	calls       chan struct{} // a token per running counted request; nil = no limit
	timeout     time.Duration // session_timeout; 0 = never
	book        *Book
	log         *slog.Logger
	// End ends a session for good (its next request gets 404); set it
	// before the server serves (NewLimits's closes the session).
	End func(ss *mcp.ServerSession)
	// Counted is told of each session event (metrics.SessionEvicted, ...),
	// never under the book's lock; set it before the server serves.
	Counted func(event string)
}

func NewLimits(project string, maxSessions, maxToolCalls int, timeout time.Duration, book *Book) *Limits {
	l := &Limits{
		project: project, maxSessions: maxSessions, timeout: timeout, book: book, log: book.log,
		End:     func(ss *mcp.ServerSession) { ss.Close() },
		Counted: func(string) {},
	}
	if maxToolCalls > 0 {
		l.calls = make(chan struct{}, maxToolCalls)
	}
	return l
}

// busyError refuses a session: no place can be had now.
type busyError struct {
	msg   string
	retry int // seconds, for Retry-After
}

func (e *busyError) Error() string { return e.msg }

// refusal is the error of a newcomer when no place can be had.
func (l *Limits) refusal(admitted int, wait time.Duration) *busyError {
	retry := max(1, int(math.Ceil(wait.Seconds())))
	return &busyError{retry: retry, msg: fmt.Sprintf(
		"project %s has %d MCP sessions, all busy or still connecting (mcp.max_sessions: %d): retry in %ds, end a session (`berth clients --close`), or raise the limit in .praxis-os/config.yaml",
		l.project, admitted, l.maxSessions, retry)}
}

// finishWait is how long a newcomer that finds every place busy waits for
// a session with only requests in flight to finish one: a client that
// opens its next session the moment an answer arrives must not be refused
// because the handler that wrote the answer has not returned yet.
const finishWait = 250 * time.Millisecond

// room reports whether a new session would be admitted now (at once, or
// by evicting an idle one); else the refusal. While every place is busy
// but some session is busy only with requests, it waits up to finishWait
// (or until ctx ends) for one of them to end.
func (l *Limits) room(ctx context.Context) *busyError {
	if l.maxSessions <= 0 {
		return nil
	}
	deadline := time.NewTimer(finishWait)
	defer deadline.Stop()
	for {
		p := l.book.places(time.Now())
		if p.admitted < l.maxSessions || p.victim != nil {
			return nil
		}
		if !p.finishing {
			return l.refusal(p.admitted, p.wait)
		}
		select {
		case <-p.ended:
		case <-deadline.C:
			return l.refusal(p.admitted, p.wait)
		case <-ctx.Done():
			return l.refusal(p.admitted, p.wait)
		}
	}
}

// refuseSessions answers 503 with Retry-After to requests that would open
// a session while every place is busy. Sessions that race past this check
// are refused at initialize by the middleware.
func (l *Limits) RefuseSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tr := transportAt(r.URL.Path); tr != nil && tr.opens(r) {
			if err := l.room(r.Context()); err != nil {
				l.Counted(metrics.SessionRefused)
				WriteBusy(w, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// WriteBusy answers 503 with the refusal and its Retry-After.
func WriteBusy(w http.ResponseWriter, err error) {
	retry := 1
	if be, ok := err.(*busyError); ok {
		retry = be.retry
	}
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	controlapi.WriteError(w, api.Errorf(http.StatusServiceUnavailable, api.CodeBusy, "%v", err))
}

// middleware applies the limits to the requests of the mount's server,
// each by the transport its context carries: the IDE's sessions are never
// refused.
func (l *Limits) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		tr := transportOf(ctx)
		ide, stream := tr != nil && tr.ide, tr != nil && tr.stream
		ss, _ := req.GetSession().(*mcp.ServerSession)
		opens := method == "initialize" || (method == "server/discover" && stream)
		switch {
		case opens && !ide && ss != nil:
			if err := l.Admit(ss); err != nil {
				return nil, &jsonrpc.Error{Code: CodeBusy, Message: err.Error()}
			}
			res, err := next(ctx, method, req)
			if err != nil {
				l.book.giveBack(ss)
			}
			return res, err
		case l.calls != nil && !strings.HasPrefix(method, "notifications/") && (countedMethods[method] || streamable.InBatch(req.GetExtra())):
			if err := l.take(ctx, streamable.InBatch(req.GetExtra())); err != nil {
				return nil, err
			}
			defer func() { <-l.calls }()
		}
		return next(ctx, method, req)
	}
}

// countedMethods are the requests mcp.max_tool_calls counts wherever they
// come from: those whose work a client chooses (a tool, a file read whole,
// a prompt rendered). Every request of a JSON-RPC batch counts too.
var countedMethods = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true}

// take takes a place among the requests mcp.max_tool_calls allows: at once
// or a busy error, or for the request of a batch (whose entries all arrive
// at once) when one frees, until ctx ends.
func (l *Limits) take(ctx context.Context, wait bool) error {
	if wait {
		select {
		case l.calls <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case l.calls <- struct{}{}:
		return nil
	default:
		return &jsonrpc.Error{Code: CodeBusy, Message: fmt.Sprintf(
			"project %s is running %d requests (tool calls, resource reads, prompts), its mcp.max_tool_calls: retry in a moment, or raise the limit in .praxis-os/config.yaml",
			l.project, cap(l.calls))}
	}
}

// admit counts ss against mcp.max_sessions until it ends, evicting the
// session idle longest when the project is full; a *busyError when every
// place is busy. A session takes its place with initialize, or with
// server/discover for clients of the sessionless protocol (2026-07-28) on
// a WebSocket or SSE stream (on /mcp that probe gets a throwaway session
// of its own, so it is not counted); a failed handshake gives it back. One
// that initializes again keeps its place. A session restored after a
// broker restart is admitted the same way.
func (l *Limits) Admit(ss *mcp.ServerSession) error {
	ev, full := l.book.takePlace(ss, time.Now(), l.maxSessions)
	if full != nil {
		l.Counted(metrics.SessionRefused)
		return l.refusal(full.admitted, full.wait)
	}
	if ev != nil {
		l.Counted(metrics.SessionEvicted)
		l.log.Info("idle MCP session ended to admit a new one (mcp.max_sessions)", "session", ev.id,
			"transport", ev.transport, "idle", ev.idle.Round(time.Millisecond), "max_sessions", l.maxSessions)
		l.End(ev.ss)
	}
	return nil
}

// sweepEvery is how often sweep looks: often enough that keepIdle holds
// within a second, and a short session_timeout (tests) within a quarter.
func (l *Limits) sweepEvery() time.Duration {
	every := time.Second
	if l.timeout > 0 {
		every = min(every, max(l.timeout/4, 10*time.Millisecond))
	}
	return every
}

// sweep ends, until ctx ends, the sessions session_timeout and keepIdle
// say to end (see the rule above); each also runs every after a sweep.
func (l *Limits) Sweep(ctx context.Context, srv *mcp.Server, each func(now time.Time)) {
	tick := time.NewTicker(l.sweepEvery())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for _, s := range l.due(srv, now) {
				l.End(s.ss)
			}
			if each != nil {
				each(now)
			}
		}
	}
}

// due lists the sessions to end now. Sessions the book has not seen yet
// (an SSE stream that has sent nothing) are entered, so that their time
// counts from the first sweep that sees them. Each is counted once the
// book's lock is released: counted calls out of the mount.
func (l *Limits) due(srv *mcp.Server, now time.Time) []*session {
	var out []*session
	var events []string
	l.book.visit(srv, now, func(all []*session) { out, events = l.dueLocked(all, now) })
	for _, ev := range events {
		l.Counted(ev)
	}
	return out
}

// dueLocked is due's choice among all, with the event each is counted as;
// the book's lock is held.
func (l *Limits) dueLocked(all []*session, now time.Time) (out []*session, events []string) {
	var idle []*session
	for _, s := range all {
		if s.tr != nil && s.tr.ide {
			continue
		}
		if l.timeout > 0 && !s.busyLocked() && now.Sub(s.idleSince) >= l.timeout {
			out = append(out, s)
			events = append(events, metrics.SessionTimedOut)
			continue
		}
		if l.maxSessions <= 0 && !s.busyLocked() && now.Sub(s.idleSince) >= idleGrace {
			idle = append(idle, s)
		}
	}
	if len(idle) > keepIdle {
		// Newest idle first: those past keepIdle are the longest idle.
		slices.SortFunc(idle, func(a, b *session) int { return b.idleSince.Compare(a.idleSince) })
		for _, s := range idle[keepIdle:] {
			out = append(out, s)
			events = append(events, metrics.SessionEvicted)
		}
	}
	return out, events
}
