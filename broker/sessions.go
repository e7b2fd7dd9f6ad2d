package broker

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTags remembers the transport of each session of a mount's server:
// from the context of its first request (middleware), or as it connects
// for the WebSocket transports. A session forgets its tag when it ends.
type sessionTags struct {
	mu sync.Mutex // guards by
	by map[*mcp.ServerSession]*transport
}

func newSessionTags() *sessionTags {
	return &sessionTags{by: make(map[*mcp.ServerSession]*transport)}
}

// tag records ss's transport; the first tag stays.
func (st *sessionTags) tag(ss *mcp.ServerSession, tr *transport) {
	if ss == nil || tr == nil {
		return
	}
	st.mu.Lock()
	_, known := st.by[ss]
	if !known {
		st.by[ss] = tr
	}
	st.mu.Unlock()
	if !known {
		go func() {
			_ = ss.Wait()
			st.mu.Lock()
			delete(st.by, ss)
			st.mu.Unlock()
		}()
	}
}

// of is ss's transport, or nil while it is unknown (a session that has
// sent nothing yet).
func (st *sessionTags) of(ss *mcp.ServerSession) *transport {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.by[ss]
}

// middleware tags the session of every request with its context's transport.
func (st *sessionTags) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			st.tag(ss, transportOf(ctx))
		}
		return next(ctx, method, req)
	}
}

// count is srv's initialized sessions by transport name (transports with
// none are left out).
func (st *sessionTags) count(srv *mcp.Server) map[string]int {
	out := make(map[string]int, len(transports))
	for ss := range srv.Sessions() {
		if ss.InitializeParams() == nil {
			continue
		}
		if tr := st.of(ss); tr != nil {
			out[tr.name]++
		}
	}
	return out
}
