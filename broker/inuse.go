package broker

import (
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
func (b *sessionBook) quietLocked(s *session, now time.Time) {
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

// holdFor is how long from now the sessions of srv hold the mount beyond
// its holders (0: they do not): grace (at least minRecheck) while one of
// them has a request in flight, else what is left of grace since the last
// went quiet.
func (b *sessionBook) holdFor(srv *mcp.Server, now time.Time, grace time.Duration) time.Duration {
	all := slices.Collect(srv.Sessions())
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ss := range all {
		s := b.entryLocked(ss, nil, now)
		if s.tr != nil && s.tr.ide {
			continue
		}
		if s.inFlightLocked() {
			return max(grace, minRecheck)
		}
	}
	return max(0, b.quietAt.Add(grace).Sub(now))
}

// inFlightLocked reports whether s is answering a request: a message
// being handled, or a POST on /mcp being answered.
func (s *session) inFlightLocked() bool { return s.posts > 0 || s.calls > 0 }
