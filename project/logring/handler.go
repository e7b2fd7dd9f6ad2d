package logring

import (
	"context"
	"log/slog"

	"github.com/berth-dev/berth/project/textcut"
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

// flatten appends a as key/value pairs, groups joined with dots, up to
// maxAttrs pairs in all.
func flatten(dst []kv, prefix string, a slog.Attr) []kv {
	Walk(prefix, a, func(prefix string, a slog.Attr, v slog.Value) bool {
		if len(dst) >= maxAttrs {
			return false
		}
		if !a.Equal(slog.Attr{}) {
			dst = append(dst, kv{prefix + a.Key, truncate(v.String(), maxValue)})
		}
		return true
	})
	return dst
}

// Walk calls f with each attribute of a that is not a group, its value
// resolved, and the prefix of its key: the keys of the groups it is in,
// each followed by a dot (a group without a key adds none, as slog
// inlines it), after prefix. It stops, and returns false, when f does.
func Walk(prefix string, a slog.Attr, f func(prefix string, a slog.Attr, v slog.Value) bool) bool {
	v := a.Value.Resolve()
	if v.Kind() != slog.KindGroup {
		return f(prefix, a, v)
	}
	if a.Key != "" {
		prefix += a.Key + "."
	}
	for _, g := range v.Group() {
		if !Walk(prefix, g, f) {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string { return textcut.Cut(s, n, "…") }
