package logring

import (
	"context"
	"log/slog"
	"unicode/utf8"
)

// Handler wraps next: every record next handles is also kept in r.
func (r *Ring) Handler(next slog.Handler) slog.Handler {
	return &handler{ring: r, next: next}
}

// handler keeps the attributes added by WithAttrs already flattened, and
// the project they named (only a top-level "project" counts: one inside a
// group is some other thing's project).
type handler struct {
	ring    *Ring
	next    slog.Handler
	project string
	prefix  string // open groups, "a.b."
	attrs   []kv
}

type kv struct{ k, v string }

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := Record{
		Time:    rec.Time,
		Level:   rec.Level.String(),
		Message: truncate(rec.Message, maxMessage),
		Project: h.project,
		level:   int(rec.Level),
	}
	attrs := append([]kv(nil), h.attrs...)
	rec.Attrs(func(a slog.Attr) bool {
		if h.prefix == "" && a.Key == ProjectKey {
			out.Project = a.Value.Resolve().String()
			return true // kept as Record.Project
		}
		attrs = flatten(attrs, h.prefix, a)
		return len(attrs) < maxAttrs
	})
	if len(attrs) > 0 {
		out.Attrs = make(map[string]string, len(attrs))
		for _, a := range attrs {
			out.Attrs[a.k] = a.v
		}
	}
	h.ring.add(out)
	return h.next.Handle(ctx, rec)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = append([]kv(nil), h.attrs...)
	for _, a := range as {
		if h.prefix == "" && a.Key == ProjectKey {
			c.project = a.Value.Resolve().String()
			continue
		}
		if len(c.attrs) < maxAttrs {
			c.attrs = flatten(c.attrs, h.prefix, a)
		}
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.prefix = h.prefix + name + "."
	return &c
}

// flatten appends a as key/value pairs, groups joined with dots.
func flatten(dst []kv, prefix string, a slog.Attr) []kv {
	v := a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return dst
	}
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			if len(dst) >= maxAttrs {
				break
			}
			dst = flatten(dst, p, g)
		}
		return dst
	}
	return append(dst, kv{prefix + a.Key, truncate(v.String(), maxValue)})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) { // do not cut a UTF-8 sequence in two
		n--
	}
	return s[:n] + "…"
}
