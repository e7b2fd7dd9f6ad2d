package hosted

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Complete answers completion/complete for a hosted prompt
// (<server>__<prompt>) or resource template, from the server that serves
// it; handled is false when no hosted server does. A server that does not
// offer completions answers no values, as a prompt without suggestions.
func (p *Project) Complete(ctx context.Context, req *mcp.CompleteRequest) (res *mcp.CompleteResult, handled bool, err error) {
	t, orig := p.completionTarget(req.Params.Ref)
	if t == nil {
		return nil, false, nil
	}
	what := orig
	if req.Params.Ref.Type == "ref/resource" {
		what = req.Params.Ref.URI
	}
	res, err = forward(ctx, t, req.Session, "completion/complete", what, nil,
		func(ctx context.Context, g *generation, _ *caller) (*mcp.CompleteResult, error) {
			cs := g.cs
			if init := cs.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Completions == nil {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
			}
			params := *req.Params
			ref := *params.Ref
			if ref.Type == "ref/prompt" {
				ref.Name = orig
			}
			params.Ref = &ref
			return cs.Complete(ctx, &params)
		})
	return res, true, err
}

// completionTarget finds the running server that serves ref as this
// project lists it: the prompt's server by its prefix, or the server of
// the template in the last surface.
func (p *Project) completionTarget(ref *mcp.CompleteReference) (*target, string) {
	if ref == nil {
		return nil, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ref.Type {
	case "ref/prompt":
		server, orig, ok := strings.Cut(ref.Name, Sep)
		e := p.entries[server]
		if !ok || e == nil || e.target == nil {
			return nil, ""
		}
		ls, _ := e.target.up.snapshot()
		if ls == nil {
			return e.target, orig // not started yet: forward starts it, and it answers for its prompts
		}
		for _, pr := range ls.prompts {
			if pr.Name == orig {
				return e.target, orig
			}
		}
	case "ref/resource":
		if t := p.templates[ref.URI]; t != nil {
			return t, ""
		}
	}
	return nil, ""
}
