package loglimit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder keeps what reaches it, with the attributes of With.
type recorder struct {
	mu    *sync.Mutex
	recs  *[]string
	attrs string
}

func newRecorder() *recorder { return &recorder{mu: new(sync.Mutex), recs: new([]string)} }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *r
	for _, a := range as {
		c.attrs += " " + a.String()
	}
	return &c
}
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	s := rec.Message + r.attrs
	rec.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	r.mu.Lock()
	*r.recs = append(*r.recs, s)
	r.mu.Unlock()
	return nil
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), *r.recs...)
}

func TestAFloodOfOneLineIsCutAndCounted(t *testing.T) {
	rec := newRecorder()
	h := New(rec, Options{Burst: 3, Window: time.Hour})
	log := slog.New(h).With("project", "p1")
	for range 20000 {
		log.Warn("repeated notifications/initialized ignored", "session", "A")
	}
	log.Warn("repeated notifications/initialized ignored", "session", "B") // another session: its own line
	if got := rec.lines(); len(got) != 4 {
		t.Fatalf("%d lines passed during the flood, want 3 of session A and 1 of B: %q", len(got), got)
	}
	Flush(h) // as the window's end would
	got := rec.lines()
	want := "repeated notifications/initialized ignored project=p1 session=A repeats_dropped=19997 window=1h0m0s"
	if len(got) != 5 || got[4] != want {
		t.Fatalf("after the window: %q, want a 5th line %q", got, want)
	}
	// A new window counts afresh.
	log.Warn("repeated notifications/initialized ignored", "session", "A")
	if got := rec.lines(); len(got) != 6 {
		t.Fatalf("the line in a new window: %d lines, want 6", len(got))
	}
}

func TestLinesThatDifferAreLimitedByMessageOnly(t *testing.T) {
	rec := newRecorder()
	h := New(rec, Options{Burst: 2, MessageBurst: 50, Window: time.Hour})
	log := slog.New(h)
	for i := range 40 {
		log.Warn("search: file too large; not indexed", "path", fmt.Sprintf("f%d.md", i))
	}
	if got := len(rec.lines()); got != 40 {
		t.Fatalf("%d of 40 different lines passed", got)
	}
	// With attributes are part of the line: two projects, two lines.
	a, b := log.With("project", "a"), log.With("project", "b")
	for range 5 {
		a.Error("duplicate initialized notification")
		b.Error("duplicate initialized notification")
	}
	if got := len(rec.lines()) - 40; got != 4 {
		t.Fatalf("%d lines of two projects' floods passed, want 2 each", got)
	}
	// A flood of lines that all differ is held to MessageBurst, and counted.
	evict := log.With("project", "c")
	for i := range 3 * maxLines {
		evict.Info("idle MCP session ended to admit a new one", "session", fmt.Sprintf("s%d", i))
	}
	// 40 + 4, 50, then two reports of the two projects' drops and one of c's.
	Flush(h)
	got := rec.lines()
	want := fmt.Sprintf("idle MCP session ended to admit a new one project=c repeats_dropped=%d window=1h0m0s", 3*maxLines-50)
	if len(got) != 44+2+50+1 || !slices.Contains(got, want) {
		t.Fatalf("%d lines after a flood of different lines (want %d), without %q", len(got), 44+2+50+1, want)
	}
}
