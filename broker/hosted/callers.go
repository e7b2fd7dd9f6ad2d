package hosted

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callers tracks the calls in flight on one upstream: which session made
// each (for sampling and elicitation) and how progress tokens map. A
// shared server sees calls from many sessions and projects, so the token
// sent upstream is Berth's own, unique per upstream.
type callers struct {
	mu    sync.Mutex
	next  uint64
	byTok map[string]*caller
}

// caller is one forwarded request.
type caller struct {
	server string             // the server's name in the caller's project
	ss     *mcp.ServerSession // the session that made the request
	token  any                // the session's progress token; nil if it sent none
	ours   string             // the token sent upstream
	// ctx is the request's own context, for what is sent to the session
	// about it: the go-sdk routes a notification made with it to the
	// request's stream (its POST's SSE stream on streamable HTTP), before
	// the answer and on the same stream, rather than to the session's
	// standalone stream, which a client may not have opened.
	ctx context.Context

	// Progress notifications read off the wire (seen) and passed on
	// (handled), under callers.mu: the SDK hands notifications to their
	// handler after it has delivered the call's result, so a call waits
	// for handled to catch up with seen before it returns.
	seen, handled int
	wake          chan struct{} // cap 1: handled grew
}

type callerKey struct{}

func (c *callers) add(ctx context.Context, server string, ss *mcp.ServerSession, token any) *caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byTok == nil {
		c.byTok = map[string]*caller{}
	}
	c.next++
	cl := &caller{server: server, ss: ss, token: token, ours: "berth-" + strconv.FormatUint(c.next, 10), ctx: ctx, wake: make(chan struct{}, 1)}
	c.byTok[cl.ours] = cl
	return cl
}

func (c *callers) remove(cl *caller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byTok, cl.ours)
}

// sawProgress counts a progress notification for tok as it is read.
func (c *callers) sawProgress(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.byTok[tok]; cl != nil {
		cl.seen++
	}
}

// handledProgress counts a progress notification passed on (or dropped).
func (c *callers) handledProgress(cl *caller) {
	c.mu.Lock()
	cl.handled++
	c.mu.Unlock()
	poke(cl.wake)
}

// drain waits (at most d) until every progress notification read for cl
// has been passed on, so none trails the result.
func (c *callers) drain(cl *caller, d time.Duration) {
	c.mu.Lock()
	done := cl.handled >= cl.seen
	c.mu.Unlock()
	if done { // the usual case: no progress, or all of it passed on
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.mu.Lock()
		done := cl.handled >= cl.seen
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-cl.wake:
		case <-t.C:
			return
		}
	}
}

func (c *callers) byToken(tok any) *caller {
	s, ok := tok.(string)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byTok[s]
}

// only returns the one call in flight, and how many there are.
func (c *callers) only() (*caller, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byTok) != 1 {
		return nil, len(c.byTok)
	}
	for _, cl := range c.byTok {
		return cl, 1
	}
	return nil, 0
}

// callerFor finds the session a server request (sampling, elicitation)
// belongs to. Servers on protocol 2026-07-28 embed such requests in the
// call's result, so the call's context names it exactly. Older servers
// send them as requests of their own that name no call: Berth forwards
// them when exactly one call is in flight on the server and refuses
// otherwise, so a request never reaches a session that did not cause it.
func (u *upstream) callerFor(ctx context.Context, what string) (*caller, error) {
	if cl, ok := ctx.Value(callerKey{}).(*caller); ok {
		return cl, nil
	}
	cl, n := u.calls.only()
	switch {
	case n == 0:
		return nil, fmt.Errorf("hosted server %q sent %s outside any call: Berth forwards it only to the session whose call caused it", u.label, what)
	case cl == nil:
		return nil, fmt.Errorf("hosted server %q sent %s while %d calls were in flight: Berth cannot tell which session it is for (a server on MCP 2026-07-28 ties it to its call)", u.label, what, n)
	}
	return cl, nil
}

// sample forwards sampling/createMessage to the session whose call caused it.
func (u *upstream) sample(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	cl, err := u.callerFor(ctx, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	if caps := clientCaps(cl.ss); caps == nil || caps.Sampling == nil {
		return nil, fmt.Errorf("the client that called %s does not support sampling", cl.server)
	}
	return cl.ss.CreateMessageWithTools(ctx, req.Params)
}

// elicit forwards elicitation/create to the session whose call caused it.
func (u *upstream) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	cl, err := u.callerFor(ctx, "elicitation/create")
	if err != nil {
		return nil, err
	}
	return cl.ss.Elicit(ctx, req.Params)
}

// progress passes a progress notification on to the session that asked
// for it, under the session's own token, on the stream of its request.
func (u *upstream) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	cl := u.calls.byToken(req.Params.ProgressToken)
	if cl == nil {
		return
	}
	defer u.calls.handledProgress(cl)
	if cl.token == nil {
		return
	}
	p := *req.Params
	p.Meta, p.ProgressToken = nil, cl.token
	if err := cl.ss.NotifyProgress(cl.ctx, &p); err != nil {
		u.log.Debug("hosted server: progress not delivered", "server", u.label, "err", err)
	}
}

func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ss == nil || ss.InitializeParams() == nil {
		return nil
	}
	return ss.InitializeParams().Capabilities
}
