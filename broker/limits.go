package broker

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeBusy is the JSON-RPC error code of a request refused by a project's
// limits; the session that sent it stays open.
const CodeBusy = -32000

// retryAfter is what a refused client is told to wait, in seconds.
const retryAfter = 2

// limits enforces one project's mcp.max_sessions (network sessions that
// completed initialize), mcp.max_tool_calls (tool calls running at once,
// every session and transport together) and the broker's session_timeout
// on the stream transports, SSE and WebSocket (the streamable handler times
// out its own sessions). Each mount has its own: a busy project never
// slows another. It tells the transports apart by the transport each
// request's context carries (transports.go).
type limits struct {
	project     string
	maxSessions int           // 0 = no limit
	calls       chan struct{} // a token per running tool call; nil = no limit
	idle        time.Duration // 0 = sessions never time out

	mu       sync.Mutex // guards admitted and seen
	admitted map[*mcp.ServerSession]struct{}
	seen     map[*mcp.ServerSession]*activity // stream sessions, for the idle check
}

// activity is what the idle check knows of a session.
type activity struct {
	last     time.Time
	inflight int
}

func newLimits(project string, maxSessions, maxToolCalls int, idle time.Duration) *limits {
	l := &limits{
		project: project, maxSessions: maxSessions, idle: idle,
		admitted: make(map[*mcp.ServerSession]struct{}),
		seen:     make(map[*mcp.ServerSession]*activity),
	}
	if maxToolCalls > 0 {
		l.calls = make(chan struct{}, maxToolCalls)
	}
	return l
}

// full reports whether a new network session would be refused.
func (l *limits) full() bool {
	if l.maxSessions <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.admitted) >= l.maxSessions
}

// refuseSessions answers 503 with Retry-After to requests that would open
// a session of a transport while the project is full. Sessions that race
// past this check are refused at initialize by the middleware.
func (l *limits) refuseSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tr := transportAt(r.URL.Path); tr != nil && tr.opens(r) && l.full() {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			controlapi.WriteError(w, api.Errorf(http.StatusServiceUnavailable, api.CodeBusy, "%s", l.sessionsMessage()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *limits) sessionsMessage() string {
	return fmt.Sprintf("project %s has %d MCP sessions open, its mcp.max_sessions: retry in %ds, close a session, or raise the limit in .praxis-os/config.yaml",
		l.project, l.maxSessions, retryAfter)
}

// middleware applies the limits to the requests of the mount's server,
// each by the transport its context carries: the IDE's sessions are never
// refused, stream sessions are timed out here.
func (l *limits) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		tr := transportOf(ctx)
		ide, stream := tr != nil && tr.ide, tr != nil && tr.stream
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if stream && l.idle > 0 && ss != nil {
			defer l.touch(ss)()
		}
		opens := method == "initialize" || (method == "server/discover" && stream)
		switch {
		case opens && !ide && ss != nil:
			if !l.admit(ss) {
				return nil, &jsonrpc.Error{Code: CodeBusy, Message: l.sessionsMessage()}
			}
			res, err := next(ctx, method, req)
			if err != nil {
				l.release(ss)
			}
			return res, err
		case method == "tools/call" && l.calls != nil:
			select {
			case l.calls <- struct{}{}:
				defer func() { <-l.calls }()
			default:
				return nil, &jsonrpc.Error{Code: CodeBusy, Message: fmt.Sprintf(
					"project %s is running %d tool calls, its mcp.max_tool_calls: retry in a moment, or raise the limit in .praxis-os/config.yaml",
					l.project, cap(l.calls))}
			}
		}
		return next(ctx, method, req)
	}
}

// admit counts ss against mcp.max_sessions until it ends; false if full.
// A session takes its place with initialize, or with server/discover for
// clients of the sessionless protocol (2026-07-28) on a WebSocket or SSE
// stream (on /mcp that probe gets a throwaway session of its own, so it is
// not counted); a failed handshake gives it back. One that initializes again
// keeps its place.
func (l *limits) admit(ss *mcp.ServerSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.admitted[ss]; ok {
		return true
	}
	if l.maxSessions > 0 && len(l.admitted) >= l.maxSessions {
		return false
	}
	l.admitted[ss] = struct{}{}
	go func() {
		_ = ss.Wait()
		l.release(ss)
	}()
	return true
}

func (l *limits) release(ss *mcp.ServerSession) {
	l.mu.Lock()
	delete(l.admitted, ss)
	delete(l.seen, ss)
	l.mu.Unlock()
}

// touch records a request of ss; the returned func marks its end.
func (l *limits) touch(ss *mcp.ServerSession) func() {
	l.mu.Lock()
	a := l.activityLocked(ss, time.Now())
	a.inflight++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		a.inflight--
		a.last = time.Now()
		l.mu.Unlock()
	}
}

func (l *limits) activityLocked(ss *mcp.ServerSession, now time.Time) *activity {
	a := l.seen[ss]
	if a == nil {
		a = &activity{last: now}
		l.seen[ss] = a
	}
	return a
}

// closeIdle closes every stream session of srv (tags tells which those
// are) that has had no request for l.idle and has none running, until ctx
// ends. A session counts from the first time it is seen, so one that
// never sends anything times out too: a session whose transport is not
// known yet has sent nothing, and only a stream session stays so.
func (l *limits) closeIdle(ctx context.Context, srv *mcp.Server, tags *sessionTags) {
	if l.idle <= 0 {
		return
	}
	tick := time.NewTicker(min(max(l.idle/4, 10*time.Millisecond), 30*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			var idle []*mcp.ServerSession
			tracked := make(map[*mcp.ServerSession]bool)
			l.mu.Lock()
			for ss := range srv.Sessions() {
				if tr := tags.of(ss); tr != nil && !tr.stream {
					continue
				}
				tracked[ss] = true
				if a := l.activityLocked(ss, now); a.inflight == 0 && now.Sub(a.last) >= l.idle {
					idle = append(idle, ss)
				}
			}
			for ss := range l.seen {
				if !tracked[ss] {
					delete(l.seen, ss)
				}
			}
			l.mu.Unlock()
			for _, ss := range idle {
				_ = ss.Close()
			}
		}
	}
}
