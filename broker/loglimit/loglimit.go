// Package loglimit keeps a misbehaving client from filling the broker's
// log with one line repeated over and over: a slog.Handler that passes the
// first Burst copies of a line in each Window and drops the rest, then
// logs the line once more with how many copies it dropped.
//
// Two records are the same line when their level, message and attributes
// (those of the logger's With and the record's own, values included) are
// the same; the time is not compared. A line that names its session (the
// broker's do: session=<id>) is therefore limited per session, and a
// flood from one client never hides the lines of another. Lines that only
// differ in their own attributes (a warning per skipped file, a line per
// evicted session) are limited together, more loosely: MessageBurst per
// Window for each message of each logger (a project's, say).
package loglimit

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Defaults: at most 5 copies of one line and 100 lines of one message a
// minute, plus one line for each saying how many more there were.
const (
	DefaultBurst        = 5
	DefaultMessageBurst = 100
	DefaultWindow       = time.Minute
	// maxLines bounds the lines being counted; past it, lines whose window
	// is over are forgotten, and when none is, a new line is counted by its
	// message alone.
	maxLines = 1024
)

// Options configures New.
type Options struct {
	Burst        int           // copies of one line passed per window; DefaultBurst when 0
	MessageBurst int           // lines of one message passed per window; DefaultMessageBurst when 0
	Window       time.Duration // DefaultWindow when 0
}

// New wraps next.
func New(next slog.Handler, opts Options) slog.Handler {
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.MessageBurst <= 0 {
		opts.MessageBurst = DefaultMessageBurst
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	return &handler{next: next, st: &state{opts: opts, lines: make(map[string]*line)}}
}

// state is shared by a handler and every handler derived from it.
type state struct {
	opts  Options
	mu    sync.Mutex // guards lines, every *line in it and nextForget
	lines map[string]*line
	// nextForget is the earliest a line can be forgotten: a flood of
	// distinct lines does not walk the table for each one.
	nextForget time.Time
}

// line is one line's count in its current window.
type line struct {
	start   time.Time
	seen    int
	dropped int
	flush   *time.Timer // set at the first drop: reports the drops at the window's end
	report  func()      // what flush runs
}

type handler struct {
	next   slog.Handler
	st     *state
	prefix string // the groups and attributes of With, as they key lines
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range as {
		writeAttr(&b, a)
	}
	return &handler{next: h.next.WithAttrs(as), st: h.st, prefix: b.String()}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), st: h.st, prefix: h.prefix + "[" + name + "]"}
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	msgKey, lineKey := h.keys(r)
	now := time.Now()
	st := h.st
	st.mu.Lock()
	// A copy the line limit drops does not count against its message.
	pass := st.allowLocked(h, lineKey, st.opts.Burst, now, r, true) &&
		st.allowLocked(h, msgKey, st.opts.MessageBurst, now, r, false)
	st.mu.Unlock()
	if !pass {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// allowLocked counts r under key and reports whether it may pass: one of
// the first burst in its window. The first one it refuses starts the
// report of the window's drops; withAttrs says whether the report repeats
// r's own attributes (a line) or not (a message).
func (st *state) allowLocked(h *handler, key string, burst int, now time.Time, r slog.Record, withAttrs bool) bool {
	l := st.lines[key]
	if l == nil || now.Sub(l.start) >= st.opts.Window && l.flush == nil {
		if l == nil && len(st.lines) >= maxLines && !st.forgetLocked(now) {
			return true // counted by its message only
		}
		l = &line{start: now}
		st.lines[key] = l
	}
	l.seen++
	if l.seen <= burst {
		return true
	}
	l.dropped++
	if l.flush == nil {
		rec := slog.NewRecord(now, r.Level, r.Message, 0)
		if withAttrs {
			rec = r.Clone()
		}
		l.report = func() { h.report(key, l, rec) }
		l.flush = time.AfterFunc(l.start.Add(st.opts.Window).Sub(now), l.report)
	}
	return false
}

// report ends l's window: the line is logged once more with the count of
// the copies dropped, and counted afresh.
func (h *handler) report(key string, l *line, r slog.Record) {
	st := h.st
	st.mu.Lock()
	if st.lines[key] == l {
		delete(st.lines, key)
	}
	dropped := l.dropped
	st.mu.Unlock()
	r.Time = time.Now()
	r.AddAttrs(slog.Int("repeats_dropped", dropped), slog.Duration("window", st.opts.Window))
	_ = h.next.Handle(context.Background(), r)
}

// Flush reports now the copies dropped in every window still open, as each
// window's end would: the broker calls it as it stops, so that no count is
// lost. h is a handler New returned (or one derived from it); others are
// left alone.
func Flush(h slog.Handler) {
	lh, ok := h.(*handler)
	if !ok {
		return
	}
	st := lh.st
	st.mu.Lock()
	var due []func()
	for _, l := range st.lines {
		if l.flush != nil && l.flush.Stop() {
			due = append(due, l.report)
		}
	}
	st.mu.Unlock()
	for _, report := range due {
		report()
	}
}

// forgetLocked drops the lines whose window is over and that dropped
// nothing; it reports whether there is room now.
func (st *state) forgetLocked(now time.Time) bool {
	if now.Before(st.nextForget) {
		return len(st.lines) < maxLines
	}
	next := now.Add(st.opts.Window) // a line counted from now on ends later
	for k, l := range st.lines {
		switch end := l.start.Add(st.opts.Window); {
		case l.flush != nil: // its report forgets it
		case !now.Before(end):
			delete(st.lines, k)
		case end.Before(next):
			next = end
		}
	}
	st.nextForget = next
	return len(st.lines) < maxLines
}

// keys are what make two records the same message of one logger, and the
// same line.
func (h *handler) keys(r slog.Record) (msg, line string) {
	var b strings.Builder
	b.WriteString(r.Level.String())
	b.WriteByte(0)
	b.WriteString(r.Message)
	b.WriteByte(0)
	b.WriteString(h.prefix)
	msg = "m" + b.String()
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, a)
		return true
	})
	return msg, "l" + b.String()
}

func writeAttr(b *strings.Builder, a slog.Attr) {
	b.WriteString(a.Key)
	b.WriteByte('=')
	b.WriteString(a.Value.Resolve().String())
	b.WriteByte(0)
}
