package hosted

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sep joins a server's name and its tool or prompt name: memory__read_graph.
const Sep = "__"

// stamp says which listing an installed item came from; an item is added
// again when its stamp changes (a relist or a restart), which makes the
// SDK send list_changed.
type stamp struct {
	owner   *entry
	version uint64
}

// installed is what one *mcp.Server got from this project.
type installed struct {
	tools, prompts, resources, templates map[string]stamp
}

// surface is everything the project's servers offer, as it should be
// installed.
type surface struct {
	tools     map[string]item[*mcp.Tool, mcp.ToolHandler]
	prompts   map[string]item[*mcp.Prompt, mcp.PromptHandler]
	resources map[string]item[*mcp.Resource, mcp.ResourceHandler]
	templates map[string]item[*mcp.ResourceTemplate, mcp.ResourceHandler]
}

type item[T, H any] struct {
	stamp
	value   T
	handler H
}

// Install adds the hosted tools, prompts and resources to srv and keeps
// them in step with the servers until [Project.Uninstall] or Close. Add
// [Project.Middleware] to srv too, so lazy servers start when a session
// first lists or calls.
func (p *Project) Install(srv *mcp.Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.servers[srv] != nil {
		return
	}
	in := &installed{tools: map[string]stamp{}, prompts: map[string]stamp{}, resources: map[string]stamp{}, templates: map[string]stamp{}}
	p.servers[srv] = in
	in.apply(srv, p.surface(), p.spec.Log)
}

// Uninstall removes what Install added to srv.
func (p *Project) Uninstall(srv *mcp.Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in := p.servers[srv]; in != nil {
		in.removeAll(srv)
		delete(p.servers, srv)
	}
}

// ToolNames lists the hosted tools the project serves now (for
// mcp.max_tools_warning and get_server_info), as of the last sync.
func (p *Project) ToolNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return sortedKeys(p.tools)
}

// sync brings every installed server in step and tells OnChange.
func (p *Project) sync() {
	p.mu.Lock()
	s := p.surface()
	for srv, in := range p.servers {
		in.apply(srv, s, p.spec.Log)
	}
	fns := append([]func(){}, p.onChange...)
	p.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// surface computes the namespaced surface from the servers' last lists and
// records its tool names in p.tools and the servers of its resources and
// templates in p.resources and p.templates.
// Tools and prompts are <server>__<name>. Resources keep the URIs their
// server gives them (tool results link to them by those URIs); when two
// servers offer one URI or template, the first by name serves it.
// Called with p.mu held.
func (p *Project) surface() *surface {
	s := &surface{
		tools:     map[string]item[*mcp.Tool, mcp.ToolHandler]{},
		prompts:   map[string]item[*mcp.Prompt, mcp.PromptHandler]{},
		resources: map[string]item[*mcp.Resource, mcp.ResourceHandler]{},
		templates: map[string]item[*mcp.ResourceTemplate, mcp.ResourceHandler]{},
	}
	for _, name := range sortedKeys(p.entries) {
		e := p.entries[name]
		if e.target == nil {
			continue
		}
		e.served, e.withheld = 0, 0
		ls, ver := e.target.up.snapshot()
		if ls == nil {
			continue
		}
		st := stamp{e, ver}
		t := e.target
		for _, tool := range ls.tools {
			full := name + Sep + tool.Name
			if e.decl.Server.Tools.Allows(tool.Name) && !e.approved.Allows(tool.Name) {
				e.withheld++ // widened since the approval: served once approved again
			}
			if !e.allows(tool.Name) || !validToolName(full) {
				continue
			}
			c := *tool
			c.Name = full
			orig := tool.Name
			s.tools[full] = item[*mcp.Tool, mcp.ToolHandler]{st, &c, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return t.callTool(ctx, req, orig)
			}}
			e.served++
		}

		for _, pr := range ls.prompts {
			c := *pr
			c.Name = name + Sep + pr.Name
			orig := pr.Name
			s.prompts[c.Name] = item[*mcp.Prompt, mcp.PromptHandler]{st, &c, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return t.getPrompt(ctx, req, orig)
			}}
		}
		for _, r := range ls.resources {
			if _, taken := s.resources[r.URI]; !taken {
				s.resources[r.URI] = item[*mcp.Resource, mcp.ResourceHandler]{st, r, t.readResource}
			}
		}
		for _, rt := range ls.templates {
			if _, taken := s.templates[rt.URITemplate]; !taken {
				s.templates[rt.URITemplate] = item[*mcp.ResourceTemplate, mcp.ResourceHandler]{st, rt, t.readResource}
			}
		}
	}
	p.tools = make(map[string]bool, len(s.tools))
	for name := range s.tools {
		p.tools[name] = true
	}
	p.resources = make(map[string]*target, len(s.resources))
	for uri, it := range s.resources {
		p.resources[uri] = it.owner.target
	}
	p.templates = make(map[string]*target, len(s.templates))
	for tmpl, it := range s.templates {
		p.templates[tmpl] = it.owner.target
	}
	return s
}

// validToolName is the MCP rule for tool names (the SDK only logs a bad one).
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// apply brings srv in step with s: removes what is gone, adds what is new
// or came from a newer listing.
func (in *installed) apply(srv *mcp.Server, s *surface, log interface{ Warn(string, ...any) }) {
	applyKind(in.tools, s.tools, srv.RemoveTools, func(it item[*mcp.Tool, mcp.ToolHandler]) error {
		return guard(func() { srv.AddTool(it.value, it.handler) })
	}, log)
	applyKind(in.prompts, s.prompts, srv.RemovePrompts, func(it item[*mcp.Prompt, mcp.PromptHandler]) error {
		return guard(func() { srv.AddPrompt(it.value, it.handler) })
	}, log)
	applyKind(in.resources, s.resources, srv.RemoveResources, func(it item[*mcp.Resource, mcp.ResourceHandler]) error {
		return guard(func() { srv.AddResource(it.value, it.handler) })
	}, log)
	applyKind(in.templates, s.templates, srv.RemoveResourceTemplates, func(it item[*mcp.ResourceTemplate, mcp.ResourceHandler]) error {
		return guard(func() { srv.AddResourceTemplate(it.value, it.handler) })
	}, log)
}

func applyKind[T, H any](have map[string]stamp, want map[string]item[T, H], remove func(...string), add func(item[T, H]) error, log interface{ Warn(string, ...any) }) {
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for k, it := range want {
		if have[k] == it.stamp {
			continue
		}
		if err := add(it); err != nil {
			log.Warn("hosted server offers an item Berth cannot serve; skipped", "server", it.owner.decl.Name, "item", k, "err", err)
			delete(have, k)
			continue
		}
		have[k] = it.stamp
	}
}

// removeAll takes everything this project added off srv.
func (in *installed) removeAll(srv *mcp.Server) {
	srv.RemoveTools(sortedKeys(in.tools)...)
	srv.RemovePrompts(sortedKeys(in.prompts)...)
	srv.RemoveResources(sortedKeys(in.resources)...)
	srv.RemoveResourceTemplates(sortedKeys(in.templates)...)
	clear(in.tools)
	clear(in.prompts)
	clear(in.resources)
	clear(in.templates)
}

// guard turns the SDK's panic on an invalid item (a tool whose input schema
// is not an object, an unparsable URI) into an error.
func guard(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	add()
	return nil
}

// splitName splits memory__read_graph into memory and read_graph.
func splitName(full string) (server, name string, ok bool) {
	return strings.Cut(full, Sep)
}
