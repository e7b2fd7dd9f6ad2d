package hosted

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Middleware is the receiving middleware a project's *mcp.Server needs
// beside Install. It starts lazy servers when a session first lists tools,
// prompts or resources, or calls a hosted tool or prompt (waiting at most
// ListWait: a slower server's tools arrive later with list_changed), and
// advertises tools, prompts and resources with listChanged in the
// initialize answer, so sessions that began before any hosted server ran
// still hear of them.
func (p *Project) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read":
				p.ensure(ctx, "")
			case "tools/call":
				if params, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					p.ensureFor(ctx, params.Name)
				}
			case "prompts/get":
				if params, ok := req.GetParams().(*mcp.GetPromptParams); ok {
					p.ensureFor(ctx, params.Name)
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

func (p *Project) ensureFor(ctx context.Context, full string) {
	if server, _, ok := splitName(full); ok {
		p.ensure(ctx, server)
	}
}

// ensure starts the lazy servers not started yet (only the named one, if
// server is set), waits until each is running or has failed (at most
// ListWait), and installs what they offer.
func (p *Project) ensure(ctx context.Context, server string) {
	var wait []*upstream
	p.mu.Lock()
	for name, e := range p.entries {
		if e.target != nil && (server == "" || server == name) && e.target.up.unstarted() {
			wait = append(wait, e.target.up)
		}
	}
	p.mu.Unlock()
	if len(wait) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, p.pool.opts.ListWait)
	defer cancel()
	for _, u := range wait {
		u.start()
	}
	for _, u := range wait {
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
		done := u.state == StateRunning || u.state == StateFailed || u.state == StateRestarting || u.ctx.Err() != nil
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
