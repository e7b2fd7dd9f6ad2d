package project

import (
	"context"
	"fmt"
	"slices"

	"github.com/berth-dev/berth/project/config"
)

// A project's config is read again whenever one of its files
// (.praxis-os/config.yaml, config.yml, config.json) is written, created or
// removed. What can change while the project is served is applied at once:
// the tool groups (their parts are opened or closed, their tools added or
// removed, and the SDK tells every session notifications/tools/list_changed
// with the new list), mcp.max_tools_warning, the hosted servers' section,
// and new warnings are logged. The keys below need the project mounted
// again; their edit is logged and applied then. A config that does not
// load keeps the settings in force, and the log (which reaches the
// sessions as notifications/message, get_recent_logs and the dashboard)
// says why, as does the project's status (config_error).

// remountKeys names the keys applied only when the project is mounted
// again, with how to read each from a config.
var remountKeys = []struct {
	name string
	get  func(config.Config) any
}{
	{"mcp.http_port", func(c config.Config) any { return c.MCP.HTTPPort }},
	{"mcp.max_sessions", func(c config.Config) any { return c.MCP.MaxSessions }},
	{"mcp.max_tool_calls", func(c config.Config) any { return c.MCP.MaxToolCalls }},
	{"rag.standards_path", func(c config.Config) any { return c.RAG.StandardsPath }},
	{"rag.usage_path", func(c config.Config) any { return c.RAG.UsagePath }},
	{"rag.workflows_path", func(c config.Config) any { return c.RAG.WorkflowsPath }},
	{"rag.allow_outside", func(c config.Config) any { return fmt.Sprint(c.RAG.AllowOutside) }},
}

// applicable is next with the keys that need a remount kept as in cur,
// and the names of those keys next changes.
func applicable(cur, next config.Config) (config.Config, []string) {
	applied := next
	applied.MCP.HTTPPort, applied.MCP.MaxSessions, applied.MCP.MaxToolCalls = cur.MCP.HTTPPort, cur.MCP.MaxSessions, cur.MCP.MaxToolCalls
	applied.RAG = cur.RAG
	var later []string
	for _, k := range remountKeys {
		if k.get(cur) != k.get(next) {
			later = append(later, k.name)
		}
	}
	return applied, later
}

// sameGroups reports whether a and b enable the same tool groups.
func sameGroups(a, b config.Config) bool {
	x, y := slices.Clone(a.MCP.EnabledToolGroups), slices.Clone(b.MCP.EnabledToolGroups)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// reload reads the config again and applies what it can (see above).
func (e *Engine) reload(ctx context.Context) {
	next, err := config.Load(e.root)
	if err != nil {
		e.refuseConfig(err)
		return
	}
	old := e.current()
	applied, later := applicable(old.cfg, next)
	for _, w := range next.Warnings {
		if !slices.Contains(old.cfg.Warnings, w) {
			e.log.Warn("project config: " + w)
		}
	}
	for _, k := range later {
		e.log.Info("project config: " + k + " changed; it applies when the project is mounted again (close its IDE windows and `berth detach` it, or restart the broker)")
	}
	if sameGroups(old.cfg, applied) {
		p := *old
		p.cfg = applied
		e.swap(&p, "")
		if applied.MCP.MaxToolsWarning != old.cfg.MCP.MaxToolsWarning {
			_ = e.listTools(ctx)
		}
		e.log.Info("project config reloaded", "file", applied.File)
		e.configApplied(applied)
		return
	}
	p, err := e.buildParts(ctx, applied, old)
	if err != nil {
		e.refuseConfig(err)
		return
	}
	// The new tools first (a tool of both replaces itself, now on the new
	// parts), then the ones gone: a tools/list in between never misses one
	// that stays. The SDK tells the sessions once the changes settle.
	p.tools, p.groups = addGroupTools(e.srv, p)
	var gone []string
	for _, name := range old.tools {
		if !slices.Contains(p.tools, name) {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		e.srv.RemoveTools(gone...)
	}
	if p.catalog != old.catalog {
		old.catalog.withdraw()
		p.catalog.serve(e.srv)
	}
	e.swap(p, "")
	if err := old.close(p); err != nil {
		e.log.Warn("close what the old tool groups used", "err", err)
	}
	if err := e.listTools(ctx); err != nil {
		e.log.Warn("list the project's tools", "err", err)
	}
	e.log.Info("project config applied: tool groups changed", "from", old.cfg.MCP.EnabledToolGroups, "to", applied.MCP.EnabledToolGroups, "tools", len(e.ToolNames()))
	e.configApplied(applied)
}

// OnConfigApplied makes f hear of every config edit the engine applies,
// with the config as applied (the broker keeps the hosted servers in step
// with it). f runs on the engine's reload goroutine, one edit at a time.
func (e *Engine) OnConfigApplied(f func(config.Config)) {
	e.mu.Lock()
	e.onConfig = f
	e.mu.Unlock()
}

// configApplied tells OnConfigApplied's f of cfg.
func (e *Engine) configApplied(cfg config.Config) {
	e.mu.Lock()
	f := e.onConfig
	e.mu.Unlock()
	if f != nil {
		f(cfg)
	}
}

// refuseConfig keeps the settings in force and says why.
func (e *Engine) refuseConfig(err error) {
	msg := fmt.Sprintf("project config edit not applied, the previous settings stay: %v", err)
	e.mu.Lock()
	e.configErr = msg
	e.mu.Unlock()
	e.log.Warn(msg)
}

// swap makes p the engine's parts and records configErr.
func (e *Engine) swap(p *parts, configErr string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.p = p
	e.configErr = configErr
}
