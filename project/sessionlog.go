package project

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/project/logring"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionLog sends the engine's log records (the index built, a file
// skipped, a gate failed, a config warning: everything the engine logs
// about the project) to every session of its server as
// notifications/message. The SDK sends a session only what is at or above
// the level it set with logging/setLevel, and nothing before it sets one.
//
// The logger never waits for a session: records are queued (at most
// sessionLogQueue) and a goroutine, running only while the queue holds
// records, sends them; past that, records are dropped and counted. A send
// that fails is not logged (that would be sent again).
type sessionLog struct {
	srv     atomic.Pointer[mcp.Server]
	dropped atomic.Int64

	mu      sync.Mutex // guards the fields below
	queue   []*mcp.LoggingMessageParams
	running bool // the sender goroutine runs
	closed  bool
	sender  sync.WaitGroup
}

// sessionLogQueue bounds the records waiting to be sent.
const sessionLogQueue = 256

// sessionSendTimeout bounds one notification to one session.
const sessionSendTimeout = 2 * time.Second

func newSessionLog() *sessionLog { return &sessionLog{} }

// serve starts sending to s's sessions.
func (l *sessionLog) serve(s *mcp.Server) { l.srv.Store(s) }

// add queues r, starting the sender if it is not running.
func (l *sessionLog) add(r slog.Record) {
	l.addMessage(&mcp.LoggingMessageParams{Level: mcpLevel(r.Level), Logger: "berth", Data: recordData(r)})
}

// addMessage queues msg as add queues a record.
func (l *sessionLog) addMessage(msg *mcp.LoggingMessageParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
	case len(l.queue) >= sessionLogQueue:
		l.dropped.Add(1)
	default:
		l.queue = append(l.queue, msg)
		if !l.running {
			l.running = true
			l.sender.Add(1)
			go l.run()
		}
	}
}

// run sends the queued records until the queue is empty.
func (l *sessionLog) run() {
	defer l.sender.Done()
	for {
		l.mu.Lock()
		if len(l.queue) == 0 || l.closed {
			l.running = false
			l.mu.Unlock()
			return
		}
		msg := l.queue[0]
		l.queue = l.queue[1:]
		l.mu.Unlock()
		l.send(msg)
	}
}

// send hands one message to every initialized session.
func (l *sessionLog) send(params *mcp.LoggingMessageParams) {
	s := l.srv.Load()
	if s == nil {
		return
	}
	for ss := range s.Sessions() {
		if ss.InitializeParams() == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), sessionSendTimeout)
		_ = ss.Log(ctx, params)
		cancel()
	}
}

// close stops sending, after the record being sent; queued records are
// dropped.
func (l *sessionLog) close() {
	l.mu.Lock()
	l.closed = true
	l.queue = nil
	l.mu.Unlock()
	l.sender.Wait()
}

// mcpLevel is the MCP logging level of a slog level.
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	default:
		return "debug"
	}
}

// recordData is a record as the notification's data: its message, time
// and attributes (groups as dotted keys).
func recordData(r slog.Record) map[string]any {
	d := map[string]any{"message": r.Message, "time": r.Time.UTC().Format(time.RFC3339Nano)}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(d, "", a)
		return true
	})
	return d
}

// addAttr sets a's leaves in d, by their dotted keys; one without a key
// is left out.
func addAttr(d map[string]any, prefix string, a slog.Attr) {
	logring.Walk(prefix, a, func(prefix string, a slog.Attr, v slog.Value) bool {
		if a.Key != "" {
			d[prefix+a.Key] = dataValue(v)
		}
		return true
	})
}

// dataValue is v as a notification's data holds it: an error or another
// value by its text, numbers and booleans as they are.
func dataValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return err.Error()
		}
		return v.String()
	case slog.KindString:
		return v.String()
	default:
		return v.Any()
	}
}

// handler is an slog.Handler that passes records on to inner and also
// queues them for the sessions.
func (l *sessionLog) handler(inner slog.Handler) slog.Handler {
	return &fanout{inner: inner, sl: l}
}

type fanout struct {
	inner  slog.Handler
	sl     *sessionLog
	attrs  []slog.Attr // from WithAttrs, their keys prefixed with the groups open then
	prefix string      // the groups WithGroup opened, as "a.b."
}

// Enabled is true at every level: a session may ask for debug records
// while the broker's own log is at info.
func (h *fanout) Enabled(context.Context, slog.Level) bool { return true }

func (h *fanout) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.inner.Enabled(ctx, r.Level) {
		err = h.inner.Handle(ctx, r.Clone())
	}
	if h.sl.srv.Load() == nil {
		return err
	}
	c := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	c.AddAttrs(h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		c.AddAttrs(h.prefixed(a))
		return true
	})
	h.sl.add(c)
	return err
}

// prefixed is a inside the open groups.
func (h *fanout) prefixed(a slog.Attr) slog.Attr {
	if h.prefix != "" {
		a.Key = h.prefix + a.Key
	}
	return a
}

func (h *fanout) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = append(c.attrs, h.prefixed(a))
	}
	return &c
}

func (h *fanout) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.prefix = h.prefix + name + "."
	return &c
}

// tellMissing sends a session that sets its log level what the broker
// cannot do for the project now (Endpoint.Missing, a config edit not
// applied), as warnings: those were logged when they happened, before
// the session could hear them.
func (e *Engine) tellMissing(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "logging/setLevel" || err != nil {
			return res, err
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			for _, m := range e.missing(e.endpoint()) {
				_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "berth", Data: map[string]any{"message": m}})
			}
		}
		return res, err
	}
}

// missing is ep.Missing and, while the last config edit is not applied,
// why (the settings before it are served meanwhile).
func (e *Engine) missing(ep Endpoint) []string {
	e.mu.Lock()
	configErr := e.configErr
	e.mu.Unlock()
	if configErr == "" {
		return ep.Missing
	}
	return append(slices.Clone(ep.Missing), configErr+" (fix the file; Berth applies it on save)")
}
