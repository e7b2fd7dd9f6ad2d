package ideconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scope says which of an app's files an entry goes to.
type Scope string

// Scopes.
const (
	// ScopeProject is the project's own file (in the repository).
	ScopeProject Scope = "project"
	// ScopeUser is the user's file, read in every project.
	ScopeUser Scope = "user"
	// ScopeLocal is the user's file, for one project only (Claude Code's
	// "local" scope: ~/.claude.json "projects" > root > "mcpServers").
	ScopeLocal Scope = "local"
)

// Transports an entry can use.
const (
	TransportStdio = "stdio" // the app runs berth-shim
	TransportHTTP  = "http"  // the app connects to the project's port (streamable HTTP)
	TransportSSE   = "sse"   // the same, over the legacy SSE endpoint
)

// format is the syntax of an app's file.
type format int

const (
	formatJSON format = iota // JSON; comments and trailing commas kept (JSONC)
	formatTOML
	formatYAML
)

// Places are the folders apps keep their files in.
type Places struct {
	UserHome  string // the user's home
	ConfigDir string // os.UserConfigDir
	// XDGConfig is $XDG_CONFIG_HOME, else ~/.config: where the command-line
	// apps keep theirs, on macOS too.
	XDGConfig string
	Getenv    func(string) string // the environment (CLAUDE_CONFIG_DIR, CODEX_HOME); nil for none
}

func (p Places) env(k string) string {
	if p.Getenv == nil {
		return ""
	}
	return p.Getenv(k)
}

// UserPlaces are the places of the user running this program.
func UserPlaces() (Places, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Places{}, fmt.Errorf("find your home directory: %w (set HOME)", err)
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return Places{}, fmt.Errorf("find your configuration directory: %w", err)
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" || !filepath.IsAbs(xdg) {
		xdg = filepath.Join(home, ".config")
	}
	return Places{UserHome: home, ConfigDir: cfg, XDGConfig: xdg, Getenv: os.Getenv}, nil
}

// App is one app's MCP configuration: where its files are, the key that
// holds the servers, and how it writes an entry.
type App struct {
	Name, Title string
	// Follows names the documentation (and its version) the format was
	// written from.
	Follows    string
	format     format
	ServersKey string // the top-level key holding the servers
	// projectFiles are the candidates for the project's own file, in the
	// app's order (the first that exists is used, else the first); nil
	// when the app reads none.
	projectFiles func(root string) []string
	// userFiles are the candidates for the user's file; nil when none.
	userFiles func(p Places) []string
	// local is set for an app with a per-project part of the user's file.
	local bool
	// defaultScope is the scope without --scope; "" chooses the project's
	// file when there is a project, else the user's (Cursor).
	defaultScope Scope
	// Workspace is the variable the app replaces by the open folder
	// ("" when it has none: a portable entry then relies on the app
	// starting servers in the project's folder).
	Workspace string
	// remote maps a transport to the entry's form for a URL; an absent
	// transport is one the app cannot connect to.
	remote map[string]func(name, url string) object
	// stdio is the entry's form for a command.
	stdio func(name string, e Entry) object
	// trust says what the user does in the app before it runs a server
	// of this scope ("" when nothing).
	trust map[Scope]string
}

// HasScope reports whether app has files of scope s.
func (a App) HasScope(s Scope) bool {
	switch s {
	case ScopeProject:
		return a.projectFiles != nil
	case ScopeUser:
		return a.userFiles != nil
	case ScopeLocal:
		return a.local
	}
	return false
}

// Scopes lists app's scopes.
func (a App) Scopes() []Scope {
	var out []Scope
	for _, s := range []Scope{ScopeProject, ScopeUser, ScopeLocal} {
		if a.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// DefaultScope is the scope used without --scope, for a project root or none.
func (a App) DefaultScope(root string) Scope {
	if a.defaultScope != "" {
		return a.defaultScope
	}
	if root != "" {
		return ScopeProject
	}
	return ScopeUser
}

// File is app's file of scope s for project root ("" for the user's
// files): the first candidate that exists, else the first.
func (a App) File(s Scope, root string, p Places) string {
	var c []string
	switch s {
	case ScopeProject:
		if a.projectFiles != nil && root != "" {
			c = a.projectFiles(root)
		}
	case ScopeUser, ScopeLocal:
		if a.userFiles != nil {
			c = a.userFiles(p)
		}
	}
	if len(c) == 0 {
		return ""
	}
	for _, f := range c {
		if _, err := os.Stat(f); err == nil {
			return f
		}
	}
	return c[0]
}

// ServersPath is the path of keys, from the file's top, of the object
// holding the servers of scope s.
func (a App) ServersPath(s Scope, root string) []string {
	if s == ScopeLocal {
		return []string{"projects", root, a.ServersKey}
	}
	return []string{a.ServersKey}
}

// Transports lists what app can use: stdio and the URL transports it reads.
func (a App) Transports() []string {
	out := []string{TransportStdio}
	for _, t := range []string{TransportHTTP, TransportSSE} {
		if a.remote[t] != nil {
			out = append(out, t)
		}
	}
	return out
}

// Trust is what the user must do in the app before it runs an entry of scope s.
func (a App) Trust(s Scope) string { return a.trust[s] }

// fields builds an object from key-value pairs, leaving out empty maps
// (an entry without env has no "env") unless keep names the key.
func fields(kv ...any) object {
	var o object
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		switch v := kv[i+1].(type) {
		case map[string]string:
			if len(v) == 0 {
				continue
			}
		case nil:
			continue
		}
		o = append(o, field{k, kv[i+1]})
	}
	return o
}

// args is a non-nil copy of a (an entry always has its "args" list).
func args(a []string) []string { return append([]string{}, a...) }

// mcpServersStdio is the {command, args, env} entry most apps read.
func mcpServersStdio(_ string, e Entry) object {
	return fields("command", e.Command, "args", args(e.Args), "env", e.Env)
}

func urlEntry(key string) func(string, string) object {
	return func(_, u string) object { return object{{key, u}} }
}

func typedURL(typ string) func(string, string) object {
	return func(_, u string) object { return object{{"type", typ}, {"url", u}} }
}

// Apps are the supported apps, by name.
var Apps = []App{
	{
		Name: "cursor", Title: "Cursor", ServersKey: "mcpServers",
		Follows: "Cursor's mcp.json (docs.cursor.com, Model Context Protocol, 2025-2026: command/args/env, url)",
		// ~/.cursor/mcp.json for every workspace, <project>/.cursor/mcp.json for one.
		projectFiles: func(root string) []string { return []string{filepath.Join(root, ".cursor", "mcp.json")} },
		userFiles:    func(p Places) []string { return []string{filepath.Join(p.UserHome, ".cursor", "mcp.json")} },
		Workspace:    WorkspaceFolder,
		stdio:        mcpServersStdio,
		remote:       map[string]func(string, string) object{TransportHTTP: urlEntry("url"), TransportSSE: urlEntry("url")},
	},
	{
		Name: "claude", Title: "Claude Desktop", ServersKey: "mcpServers", defaultScope: ScopeUser,
		Follows: "Claude Desktop's claude_desktop_config.json (modelcontextprotocol.io, local servers: command/args/env only)",
		// ~/Library/Application Support/Claude on macOS, %APPDATA%\Claude on
		// Windows, ~/.config/Claude on Linux: os.UserConfigDir in each case.
		userFiles: func(p Places) []string {
			return []string{filepath.Join(p.ConfigDir, "Claude", "claude_desktop_config.json")}
		},
		stdio: mcpServersStdio,
	},
	{
		Name: "vscode", Title: "VS Code", ServersKey: "servers", defaultScope: ScopeProject,
		Follows:      "VS Code's mcp.json (code.visualstudio.com/docs/copilot/customization/mcp-servers, 1.102+: type stdio|http|sse)",
		projectFiles: func(root string) []string { return []string{filepath.Join(root, ".vscode", "mcp.json")} },
		Workspace:    WorkspaceFolder,
		stdio: func(_ string, e Entry) object {
			return fields("type", "stdio", "command", e.Command, "args", args(e.Args), "env", e.Env)
		},
		remote: map[string]func(string, string) object{TransportHTTP: typedURL("http"), TransportSSE: typedURL("sse")},
	},
	{
		Name: "windsurf", Title: "Windsurf", ServersKey: "mcpServers", defaultScope: ScopeUser,
		Follows: "Windsurf's mcp_config.json (docs.windsurf.com, Cascade MCP: command/args/env, serverUrl)",
		userFiles: func(p Places) []string {
			return []string{filepath.Join(p.UserHome, ".codeium", "windsurf", "mcp_config.json")}
		},
		stdio:  mcpServersStdio,
		remote: map[string]func(string, string) object{TransportHTTP: urlEntry("serverUrl"), TransportSSE: urlEntry("serverUrl")},
	},
	{
		Name: "claude-code", Title: "Claude Code", ServersKey: "mcpServers", local: true, defaultScope: ScopeLocal,
		Follows:      "Claude Code 2.1 (code.claude.com/docs/en/mcp): .mcp.json (project scope), ~/.claude.json mcpServers (user) and projects.<root>.mcpServers (local); type stdio|http|sse",
		projectFiles: func(root string) []string { return []string{filepath.Join(root, ".mcp.json")} },
		userFiles: func(p Places) []string {
			if d := p.env("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
				return []string{filepath.Join(d, ".claude.json")}
			}
			return []string{filepath.Join(p.UserHome, ".claude.json")}
		},
		stdio: func(_ string, e Entry) object {
			return fields("type", "stdio", "command", e.Command, "args", args(e.Args), "env", e.Env)
		},
		remote: map[string]func(string, string) object{TransportHTTP: typedURL("http"), TransportSSE: typedURL("sse")},
		trust: map[Scope]string{
			ScopeProject: "Claude Code asks before it runs the servers of a project's .mcp.json: start `claude` in the project and approve the server when asked (or later in /mcp); Berth does not edit Claude Code's approvals",
		},
	},
	{
		Name: "gemini", Title: "Gemini CLI", ServersKey: "mcpServers", defaultScope: ScopeProject,
		Follows: "Gemini CLI 0.61 settings.json (github.com/google-gemini/gemini-cli docs/tools/mcp-server.md): command/args/env/cwd, or url with type http|sse (httpUrl, the older form, is still read)",
		projectFiles: func(root string) []string {
			return []string{filepath.Join(root, ".gemini", "settings.json")}
		},
		userFiles: func(p Places) []string {
			return []string{filepath.Join(p.UserHome, ".gemini", "settings.json")}
		},
		stdio:  mcpServersStdio,
		remote: map[string]func(string, string) object{TransportHTTP: typedURL("http"), TransportSSE: typedURL("sse")},
		trust: map[Scope]string{
			ScopeProject: "Gemini CLI ignores a folder's .gemini/settings.json until you trust the folder: start `gemini` in the project and trust it when asked (or /permissions); Berth does not edit Gemini's trusted folders",
			ScopeUser:    "with folder trust on, Gemini CLI starts no MCP server in a folder you have not trusted: trust the project folder when `gemini` asks (or /permissions)",
		},
	},
	{
		Name: "codex", Title: "Codex CLI", ServersKey: "mcp_servers", format: formatTOML, defaultScope: ScopeUser,
		Follows: "Codex CLI config.toml (github.com/openai/codex docs/config.md, 0.1xx): [mcp_servers.NAME] command/args/env, or url (streamable HTTP)",
		projectFiles: func(root string) []string {
			return []string{filepath.Join(root, ".codex", "config.toml")}
		},
		userFiles: func(p Places) []string {
			if d := p.env("CODEX_HOME"); d != "" && filepath.IsAbs(d) {
				return []string{filepath.Join(d, "config.toml")}
			}
			return []string{filepath.Join(p.UserHome, ".codex", "config.toml")}
		},
		stdio:  mcpServersStdio,
		remote: map[string]func(string, string) object{TransportHTTP: urlEntry("url")},
		trust: map[Scope]string{
			ScopeProject: "Codex reads a project's .codex/config.toml only in a trusted project: trust the project when `codex` asks; Berth does not edit Codex's trust settings",
		},
	},
	{
		Name: "zed", Title: "Zed", ServersKey: "context_servers", defaultScope: ScopeUser,
		Follows: "Zed's settings.json (zed.dev/docs/ai/mcp, 2025-2026): context_servers with command/args/env, or url",
		userFiles: func(p Places) []string {
			return []string{filepath.Join(p.XDGConfig, "zed", "settings.json")}
		},
		stdio:  mcpServersStdio,
		remote: map[string]func(string, string) object{TransportHTTP: urlEntry("url")},
	},
	{
		Name: "cline", Title: "Cline", ServersKey: "mcpServers", defaultScope: ScopeUser,
		Follows: "Cline's cline_mcp_settings.json (docs.cline.bot/mcp, 3.x): command/args/env/disabled, type streamableHttp|sse with url",
		// The VS Code extension's global storage, then the Cline CLI's file.
		userFiles: func(p Places) []string {
			return []string{
				filepath.Join(p.ConfigDir, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
				filepath.Join(p.UserHome, ".cline", "data", "settings", "cline_mcp_settings.json"),
			}
		},
		stdio: func(_ string, e Entry) object {
			return fields("command", e.Command, "args", args(e.Args), "env", e.Env, "disabled", false)
		},
		remote: map[string]func(string, string) object{
			TransportHTTP: func(_, u string) object { return object{{"type", "streamableHttp"}, {"url", u}, {"disabled", false}} },
			TransportSSE:  func(_, u string) object { return object{{"type", "sse"}, {"url", u}, {"disabled", false}} },
		},
	},
	{
		Name: "goose", Title: "Goose", ServersKey: "extensions", format: formatYAML, defaultScope: ScopeUser,
		Follows: "Goose 1.x config.yaml (block.github.io/goose/docs/guides/config-files): extensions.NAME {enabled, type stdio: cmd/args/envs, type streamable_http: uri}",
		userFiles: func(p Places) []string {
			return []string{filepath.Join(p.XDGConfig, "goose", "config.yaml")}
		},
		stdio: func(name string, e Entry) object {
			envs := e.Env
			if envs == nil {
				envs = map[string]string{}
			}
			return object{{"enabled", true}, {"type", "stdio"}, {"name", name}, {"description", gooseDescription},
				{"cmd", e.Command}, {"args", args(e.Args)}, {"envs", envs}, {"env_keys", []string{}}, {"timeout", 300}}
		},
		remote: map[string]func(string, string) object{TransportHTTP: func(name, u string) object {
			return object{{"enabled", true}, {"type", "streamable_http"}, {"name", name}, {"description", gooseDescription},
				{"uri", u}, {"envs", map[string]string{}}, {"env_keys", []string{}}, {"headers", map[string]string{}}, {"timeout", 300}}
		}},
	},
	{
		Name: "opencode", Title: "opencode", ServersKey: "mcp", defaultScope: ScopeProject,
		Follows: "opencode's opencode.json (opencode.ai/docs/mcp-servers, 1.x): mcp.NAME {type local, command [..], environment} or {type remote, url}",
		projectFiles: func(root string) []string {
			return []string{filepath.Join(root, "opencode.json"), filepath.Join(root, "opencode.jsonc"),
				filepath.Join(root, ".opencode", "opencode.json"), filepath.Join(root, ".opencode", "opencode.jsonc")}
		},
		userFiles: func(p Places) []string {
			d := filepath.Join(p.XDGConfig, "opencode")
			return []string{filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"), filepath.Join(d, "config.json")}
		},
		stdio: func(_ string, e Entry) object {
			return fields("type", "local", "command", append([]string{e.Command}, e.Args...), "environment", e.Env, "enabled", true)
		},
		remote: map[string]func(string, string) object{TransportHTTP: func(_, u string) object {
			return object{{"type", "remote"}, {"url", u}, {"enabled", true}}
		}},
	},
}

// gooseDescription describes Berth's entry in Goose's extension list.
const gooseDescription = "Berth: this project's tools and hosted MCP servers"

// Names lists the supported app names.
func Names() []string {
	var n []string
	for _, a := range Apps {
		n = append(n, a.Name)
	}
	return n
}

// Lookup returns the app called name.
func Lookup(name string) (App, error) {
	for _, a := range Apps {
		if a.Name == name {
			return a, nil
		}
	}
	return App{}, fmt.Errorf("unknown app %q: use %s", name, strings.Join(Names(), ", "))
}
