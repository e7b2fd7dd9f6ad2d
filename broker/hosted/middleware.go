package hosted

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Middleware is the receiving middleware a project's *mcp.Server needs
// beside Install. It starts lazy servers when a session first lists tools,
// prompts or resources, reads or subscribes to a resource (a URI a lazy
// server serves is known once it runs), or calls a hosted tool or prompt
// (waiting at most ListWait: a slower server's tools arrive later with
// list_changed), and
// advertises tools, prompts and resources with listChanged in the
// initialize answer, so sessions that began before any hosted server ran
// still hear of them. Once a session has listed, servers added later (an
// approval, a config edit) start at once for the same reason.
func (p *Project) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "resources/subscribe":
				p.listed.Store(true)
				p.ensure(ctx, "", p.pool.opts.ListWait)
			case "subscriptions/listen": // MCP 2026-07-28's resources/subscribe
				if params, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && params.Notifications != nil &&
					len(params.Notifications.ResourceSubscriptions) > 0 {
					p.ensure(ctx, "", p.pool.opts.ListWait)
				}
			case "tools/call":
				if params, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					if err := p.ensureTool(ctx, params.Name); err != nil {
						return nil, err
					}
				}
			case "prompts/get":
				if params, ok := req.GetParams().(*mcp.GetPromptParams); ok {
					if server, _, ok := splitName(params.Name); ok {
						p.ensure(ctx, server, p.pool.opts.ListWait)
					}
				}
			}
			res, err := next(ctx, method, req)
			if err == nil && p.runsAny() {
				switch r := res.(type) {
				case *mcp.InitializeResult:
					r.Capabilities = advertise(r.Capabilities)
				case *mcp.DiscoverResult:
					r.Capabilities = advertise(r.Capabilities)
				}
			}
			return res, err
		}
	}
}

// ensureTool starts the hosted server a tool call names and explains a
// hosted tool that is not served, where the SDK would only say "unknown
// tool". Names of no hosted server pass. A call waits for its server's
// first start as long as the call itself may take (its call_timeout), not
// ListWait: a list can answer without a slow server and announce its tools
// later, a call of one of them cannot.
func (p *Project) ensureTool(ctx context.Context, full string) error {
	server, tool, ok := splitName(full)
	if !ok {
		return nil
	}
	p.mu.Lock()
	e, served := p.entries[server], p.tools[full]
	p.mu.Unlock()
	if e == nil || served {
		return nil
	}
	if e.target == nil {
		return internalError("hosted server %q does not run here (%s: %s)", server, e.state, orNone(e.note+fixText(e.fix)))
	}
	p.ensure(ctx, server, e.target.timeout)
	p.mu.Lock()
	served = p.tools[full]
	p.mu.Unlock()
	if served {
		return nil
	}
	st := e.target.up.status()
	approve := "berth servers approve " + shellQuote(p.spec.Root)
	switch {
	case st.State == StateRunning && e.decl.Server.Tools.Allows(tool) && !e.approved.Allows(tool):
		return internalError("hosted server %q serves %q once approved again: its tools filter was widened since the approval; run: %s", server, tool, approve)
	case st.State == StateRunning:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("hosted server %q has no tool %q (or its allow/deny list leaves it out)", server, tool)}
	case st.State == StateNeedsApproval:
		return internalError("hosted server %q does not run here (%s: %s; run: %s)", server, st.State, st.LastError, approve)
	}
	return internalError("hosted server %q is %s, so %q cannot be called (last error: %s)", server, st.State, full, orNone(st.LastError))
}

func fixText(fix string) string {
	if fix == "" {
		return ""
	}
	return "; run: " + fix
}

// ensure starts the lazy servers not started yet (only the named one, if
// server is set), waits until each is running or has failed (at most
// wait), and installs what they offer.
func (p *Project) ensure(ctx context.Context, server string, wait time.Duration) {
	var ups []*upstream
	p.mu.Lock()
	for name, e := range p.entries {
		if e.target != nil && (server == "" || server == name) && e.target.up.unstarted() {
			ups = append(ups, e.target.up)
		}
	}
	p.mu.Unlock()
	if len(ups) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, u := range ups {
		u.start()
	}
	for _, u := range ups {
		u.settle(ctx)
	}
	p.sync()
}

// runsAny reports whether any declared server may run here.
func (p *Project) runsAny() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		if e.target != nil {
			return true
		}
	}
	return false
}

func advertise(c *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	if c == nil {
		c = &mcp.ServerCapabilities{}
	}
	if c.Tools == nil {
		c.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	if c.Prompts == nil {
		c.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if c.Resources == nil {
		c.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	return c
}

// unstarted reports whether the server has never got past starting.
func (u *upstream) unstarted() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.startedAt.IsZero() && (u.state == StateStopped || u.state == StateStarting) && u.ctx.Err() == nil
}

// settle waits until the server has run or given up on its first start.
func (u *upstream) settle(ctx context.Context) {
	for {
		u.mu.Lock()
		done := u.state == StateRunning || u.state == StateFailed || u.state == StateRestarting || u.state == StateNeedsApproval || u.ctx.Err() != nil
		ch := u.changed
		u.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-time.After(time.Minute): // ctx is bounded by ListWait; this only guards a bug
			return
		}
	}
}
