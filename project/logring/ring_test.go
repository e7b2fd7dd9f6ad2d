package logring

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func newLogger(r *Ring, level slog.Level) (*slog.Logger, *bytes.Buffer) {
	var out bytes.Buffer
	return slog.New(r.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: level}))), &out
}

func messages(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Message)
	}
	return out
}

func TestRecordsGoToTheirProjectOnly(t *testing.T) {
	r := New(Options{})
	log, out := newLogger(r, slog.LevelDebug)
	a := log.With("project", "a-1")
	a.Info("a with")
	log.Info("b attr", "project", "b-2", "port", 4242)
	log.Info("no project")
	log.WithGroup("req").Info("grouped", "project", "c-3")     // a group's "project" is not the record's
	a.WithGroup("g").Debug("a grouped", slog.String("k", "v")) // still a's
	log.With("project", "a-1").Info("b overrides", "project", "b-2")

	if got := strings.Join(messages(r.Recent("a-1", Query{MinLevel: slog.LevelDebug})), "|"); got != "a with|a grouped" {
		t.Errorf("a's ring: %s", got)
	}
	if got := strings.Join(messages(r.Recent("b-2", Query{MinLevel: slog.LevelDebug})), "|"); got != "b attr|b overrides" {
		t.Errorf("b's ring: %s", got)
	}
	if got := r.Recent("c-3", Query{}); len(got) != 0 {
		t.Errorf("a grouped project attr made a ring: %v", got)
	}
	if got := len(r.Recent("", Query{MinLevel: slog.LevelDebug})); got != 6 {
		t.Errorf("the ring of every record has %d, want 6", got)
	}
	rec := r.Recent("a-1", Query{MinLevel: slog.LevelDebug})[1]
	if rec.Attrs["g.k"] != "v" || rec.Project != "a-1" || rec.Level != "DEBUG" || rec.Attrs["project"] != "" {
		t.Errorf("a grouped record: %+v", rec)
	}
	// The wrapped handler still sees everything.
	if n := strings.Count(out.String(), "\n"); n != 6 {
		t.Errorf("the wrapped handler wrote %d lines, want 6", n)
	}
}

func TestLevelsFollowTheWrappedHandler(t *testing.T) {
	r := New(Options{})
	log, _ := newLogger(r, slog.LevelInfo)
	log.Debug("hidden", "project", "p")
	log.Info("shown", "project", "p")
	if got := messages(r.Recent("p", Query{MinLevel: slog.LevelDebug})); len(got) != 1 || got[0] != "shown" {
		t.Errorf("records at info: %v", got)
	}
}

func TestRingsAreBounded(t *testing.T) {
	r := New(Options{PerProject: 5, Global: 7, MaxProjects: 3})
	log, _ := newLogger(r, slog.LevelDebug)
	for i := range 20 {
		log.Info(fmt.Sprint(i), "project", "p", "big", strings.Repeat("x", 10_000))
	}
	got := r.Recent("p", Query{})
	if strings.Join(messages(got), ",") != "15,16,17,18,19" {
		t.Errorf("kept %v, want the newest 5", messages(got))
	}
	if v := got[0].Attrs["big"]; len(v) > maxValue+len("…") {
		t.Errorf("an attribute of %d bytes was kept whole", len(v))
	}
	if n := len(r.Recent("", Query{})); n != 7 {
		t.Errorf("global ring holds %d, want 7", n)
	}
	for i := range 5 {
		log.Info("x", "project", fmt.Sprintf("q%d", i))
	}
	r.mu.Lock()
	n := len(r.projects)
	r.mu.Unlock()
	if n != 3 {
		t.Errorf("%d project rings, want at most 3", n)
	}
	if len(r.Recent("q4", Query{})) != 1 || len(r.Recent("p", Query{})) != 0 {
		t.Error("the least recently written project should have gone first")
	}
}

func TestQueryFilters(t *testing.T) {
	r := New(Options{})
	h := r.Handler(slog.DiscardHandler)
	t0 := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	for i, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo} {
		rec := slog.NewRecord(t0.Add(time.Duration(i)*time.Minute), l, fmt.Sprint(i), 0)
		rec.AddAttrs(slog.String("project", "p"))
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{MinLevel: slog.LevelDebug}, "0,1,2,3,4"},
		{Query{MinLevel: slog.LevelWarn}, "2,3"},
		{Query{MinLevel: slog.LevelDebug, Limit: 2}, "3,4"},
		{Query{MinLevel: slog.LevelDebug, Since: t0.Add(2 * time.Minute)}, "2,3,4"},
		{Query{MinLevel: slog.LevelInfo, Since: t0.Add(90 * time.Second), Limit: 1}, "4"},
	} {
		if got := strings.Join(messages(r.Recent("p", c.q)), ","); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		level, since string
		limit        *int
		want         Query
		err          string
	}{
		{want: Query{MinLevel: slog.LevelDebug, Limit: 100}},
		{level: "WARN", limit: n(5), want: Query{MinLevel: slog.LevelWarn, Limit: 5}},
		{level: "warning", want: Query{MinLevel: slog.LevelWarn, Limit: 100}},
		{level: " error ", want: Query{MinLevel: slog.LevelError, Limit: 100}},
		{since: "10m", want: Query{MinLevel: slog.LevelDebug, Limit: 100, Since: now.Add(-10 * time.Minute)}},
		{since: "2026-01-02T14:00:00Z", want: Query{MinLevel: slog.LevelDebug, Limit: 100, Since: now.Add(-time.Hour)}},
		{level: "verbose", err: "use debug, info, warn or error"},
		{limit: n(0), err: "use 1 to 1000"},
		{limit: n(1001), err: "use 1 to 1000"},
		{limit: n(-3), err: "use 1 to 1000"},
		{since: "yesterday", err: "RFC 3339"},
		{since: "-5m", err: "positive duration"},
		{since: "0s", err: "positive duration"},
	} {
		got, err := ParseQuery(c.level, c.limit, c.since, 100, now)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseQuery(%q, %v, %q): error %v, want one containing %q", c.level, c.limit, c.since, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseQuery(%q, %v, %q) = %+v, %v; want %+v", c.level, c.limit, c.since, got, err, c.want)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []struct {
		level, since string
		limit        int
	}{{"", "", 100}, {"warn", "10m", 1}, {"ERROR", "2026-01-02T15:04:05Z", 1000}, {"x", "-1h", 0}, {"info", "1.5h", 5000}} {
		f.Add(s.level, s.since, s.limit)
	}
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, level, since string, limit int) {
		q, err := ParseQuery(level, &limit, since, 100, now)
		if err != nil {
			if q != (Query{}) {
				t.Fatalf("an error came with a query: %+v", q)
			}
			return
		}
		if q.Limit < 1 || q.Limit > MaxLimit {
			t.Fatalf("accepted limit %d", q.Limit)
		}
		if q.MinLevel < slog.LevelDebug || q.MinLevel > slog.LevelError {
			t.Fatalf("accepted level %v from %q", q.MinLevel, level)
		}
		if strings.TrimSpace(since) == "" && !q.Since.IsZero() {
			t.Fatalf("since %q gave %v", since, q.Since)
		}
	})
}

func TestTruncateKeepsUTF8Whole(t *testing.T) {
	s := strings.Repeat("é", 200) // 400 bytes
	got := truncate(s, 257)
	if !strings.HasSuffix(got, "…") || len(got) != 256+len("…") {
		t.Errorf("truncate cut %d bytes: %q", len(got), got[len(got)-8:])
	}
}

// BenchmarkHandler compares a text handler to the same handler wrapped by
// a ring: the cost the ring adds to each log record.
func BenchmarkHandler(b *testing.B) {
	for _, wrapped := range []bool{false, true} {
		name := "text"
		var h slog.Handler = slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug})
		if wrapped {
			name = "text+ring"
			h = New(Options{}).Handler(h)
		}
		log := slog.New(h).With("project", "shop-3f9a1c2b", "port", 4242)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				log.Debug("tool call", "tool", "search_standards", "transport", "http", "session", "ABCDEF", "duration", time.Millisecond, "outcome", "ok")
			}
		})
	}
}
