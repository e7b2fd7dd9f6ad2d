package broker

import (
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A session in use holds its project. When the last holder (shim or pin)
// leaves, mount_grace starts; when it ends, the mount is closed only if its
// network sessions (/mcp, /sse, /ws) are quiet too: none is busy (a
// request in flight, a stream open: the session rule's busy, limits.go),
// and the last of their requests ended (or the last of them ended) at
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
// them is busy, else what
// is left of grace since the last went quiet.
func (b *sessionBook) holdFor(srv *mcp.Server, now time.Time, grace time.Duration) time.Duration {
	all := slices.Collect(srv.Sessions())
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ss := range all {
		s := b.entryLocked(ss, nil, now)
		if s.tr != nil && s.tr.ide {
			continue
		}
		if s.busyLocked() {
			return max(grace, minRecheck)
		}
	}
	return max(0, b.quietAt.Add(grace).Sub(now))
}
