package logring

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// MaxLimit is the most records one query returns.
const MaxLimit = 1000

// Query selects records from a ring.
type Query struct {
	MinLevel slog.Level
	Since    time.Time // zero: no bound
	Limit    int       // the newest Limit matches; <= 0: all
}

// ParseQuery checks the arguments of a log query as a client sends them:
// level is "", debug, info, warn(ing) or error; limit is nil (defaultLimit)
// or 1..MaxLimit; since is "", an RFC 3339 time, or a Go duration meaning
// that long before now ("15m"). Errors say what to send instead.
func ParseQuery(level string, limit *int, since string, defaultLimit int, now time.Time) (Query, error) {
	q := Query{MinLevel: slog.LevelDebug, Limit: defaultLimit}
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "", "debug":
	case "info":
		q.MinLevel = slog.LevelInfo
	case "warn", "warning":
		q.MinLevel = slog.LevelWarn
	case "error":
		q.MinLevel = slog.LevelError
	default:
		return Query{}, fmt.Errorf("level %q is not a log level: use debug, info, warn or error", level)
	}
	if limit != nil {
		if *limit < 1 || *limit > MaxLimit {
			return Query{}, fmt.Errorf("limit %d is out of range: use 1 to %d", *limit, MaxLimit)
		}
		q.Limit = *limit
	}
	if s := strings.TrimSpace(since); s != "" {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			q.Since = t
		} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
			q.Since = now.Add(-d)
		} else {
			return Query{}, fmt.Errorf("since %q is neither a time nor a duration: use an RFC 3339 time such as 2026-01-02T15:04:05Z, or a positive duration such as 10m (that long ago)", since)
		}
	}
	return q, nil
}
