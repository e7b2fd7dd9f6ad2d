package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// appsDir holds the agent apps that are on npm (Claude Code, Gemini CLI,
// Codex CLI, opencode) and their lock file.
const appsDir = "testdata/apps"

// appCmd runs an app's own command (from appsDir) in dir with env and
// returns its combined output, ANSI colours removed.
func appCmd(t *testing.T, env []string, dir, app string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := filepath.Abs(filepath.Join(appsDir, "node_modules", ".bin", app))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", app, args, err, out)
	}
	return ansi.ReplaceAllString(string(out), "")
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// appLine is the line of out that names server, or "".
func appLine(out, server string) string {
	for _, l := range strings.Split(out, "\n") {
		if regexp.MustCompile(`(^|[\s✓✔○●])` + regexp.QuoteMeta(server) + `[:\s]`).MatchString(l + " ") {
			return l
		}
	}
	return ""
}

// appEnv is the environment of a user whose HOME is home, using the
// broker of berthHome, with berth-shim on PATH.
func appEnv(t *testing.T, home, berthHome string) []string {
	var env []string
	for _, kv := range shimOnPath(t, userEnv(home, "BERTH_HOME="+berthHome)) {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CLAUDE_CONFIG_DIR" || k == "CODEX_HOME" || k == "TMPDIR" || strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "OPENCODE") {
			continue
		}
		env = append(env, kv)
	}
	// The Gemini CLI otherwise starts a second Node process of itself
	// with a larger heap, which doubles the CPU of each command and
	// changes nothing of what it reads or connects to.
	// What the apps keep in the temporary folder (Claude Code a folder
	// per working directory) goes with the test.
	return append(env, "GEMINI_CLI_NO_RELAUNCH=true", "TMPDIR="+t.TempDir())
}

// The files as the apps leave them: the user's other servers, settings
// Berth does not know, comments where the format has them.
const (
	claudeJSONBefore = `{
  "numStartups": 7,
  "tipsHistory": {"memory-command": 3},
  "mcpServers": {
    "everywhere": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}
  },
  "projects": {
    "ROOT": {
      "allowedTools": [],
      "mcpServers": {
        "notes": {"type": "stdio", "command": "node", "args": ["notes.js"], "env": {}}
      },
      "hasTrustDialogAccepted": false
    }
  }
}
`
	geminiBefore = `{
  // my look
  "theme": "Dracula",
  "mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git"], "timeout": 5000}
  }
}
`
	codexBefore = `# Codex settings
model = "o3"
approval_policy = "on-request"

# documentation lookups
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.docs.env]
DOCS_TOKEN = "t" # read-only

[profiles.fast]
model = "o4-mini"
`
	opencodeBefore = `{
  "$schema": "https://opencode.ai/config.json",
  // the team's model
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "fetch": {"type": "local", "command": ["uvx", "mcp-server-fetch"], "enabled": false}
  }
}
`
)

// TestAgentAppsReadWhatIDEConfigWrites: for Claude Code, the Gemini CLI,
// the Codex CLI and opencode, `berth ide-config APP --write` (stdio, and
// the project's URL over streamable HTTP, and SSE where the app reads
// it) merges Berth's entries into files as the apps write them, and the
// app's own `mcp list` reads them beside the user's other servers and
// connects to Berth (Codex lists without connecting). Claude Code holds
// back a project's .mcp.json server until it is approved, and Gemini
// disables an untrusted folder's servers until the folder is trusted:
// the hints say so, and Berth edits neither app's trust. The apps run
// beside each other: each reads and writes files of its own.
func TestAgentAppsReadWhatIDEConfigWrites(t *testing.T) {
	t.Parallel() // minutes of the apps' own start-up, beside the other slow tests
	brokertest.NodeModules(t, appsDir, "@anthropic-ai/claude-code", "the agent apps on npm")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "agents", nil)
	home := userHome(t)
	env := appEnv(t, home, b.Home)
	// The apps connect over HTTP while no window holds the project: a pin keeps it served.
	if out, code := berthCmd(t, b.Home, "attach", root); code != 0 {
		t.Fatalf("berth attach: %d %s", code, out)
	}
	berth := func(t *testing.T, args ...string) string {
		t.Helper()
		cmd := exec.Command(brokertest.Berth(t), args...)
		cmd.Env, cmd.Dir = env, root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("berth %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	t.Run("claude-code", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(home, ".claude.json")
		writeFile(t, file, strings.ReplaceAll(claudeJSONBefore, "ROOT", root))
		berth(t, "ide-config", "claude-code", "--write")
		berth(t, "ide-config", "claude-code", "--transport", "http", "--name", "berth-http", "--write")
		berth(t, "ide-config", "claude-code", "--transport", "sse", "--name", "berth-sse", "--write")
		hint := berth(t, "ide-config", "claude-code", "--scope", "project", "--portable", "--name", "team", "--write")
		if !strings.Contains(hint, "Claude Code asks before it runs the servers of a project's .mcp.json") {
			t.Errorf("the project entry's hint does not say Claude Code asks first:\n%s", hint)
		}
		out := appCmd(t, env, root, "claude", "mcp", "list")
		for _, name := range []string{"berth", "berth-http", "berth-sse"} {
			if l := appLine(out, name); !strings.Contains(l, "Connected") {
				t.Errorf("claude mcp list: %s is not Connected (%q):\n%s", name, l, out)
			}
		}
		if l := appLine(out, "team"); !strings.Contains(l, "approval") {
			t.Errorf("claude mcp list: the project's .mcp.json server runs without approval (%q):\n%s", l, out)
		}
		if !strings.Contains(appLine(out, "notes"), "node notes.js") || !strings.Contains(appLine(out, "everywhere"), "npx") {
			t.Errorf("claude mcp list lost the user's servers:\n%s", out)
		}
		var top map[string]any
		if err := json.Unmarshal(mustRead(t, file), &top); err != nil {
			t.Fatal(err)
		}
		if top["tipsHistory"] == nil || dig(top, "projects", root, "allowedTools") == nil {
			t.Errorf("Claude Code's other settings are gone: %v", top)
		}
	})

	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(root, ".gemini", "settings.json")
		writeFile(t, file, geminiBefore)
		hint := berth(t, "ide-config", "gemini", "--write")
		berth(t, "ide-config", "gemini", "--transport", "http", "--name", "berth-http", "--write")
		berth(t, "ide-config", "gemini", "--transport", "sse", "--name", "berth-sse", "--write")
		if !strings.Contains(hint, "Gemini CLI ignores a folder's .gemini/settings.json until you trust the folder") {
			t.Errorf("the hint does not say to trust the folder:\n%s", hint)
		}
		if raw := mustRead(t, file); !bytes.Contains(raw, []byte("// my look")) || !bytes.Contains(raw, []byte(`"theme": "Dracula"`)) {
			t.Errorf("Gemini's comment or settings are gone:\n%s", raw)
		}
		out := appCmd(t, env, root, "gemini", "mcp", "list")
		if l := appLine(out, "berth"); !strings.Contains(l, "Disabled") || !strings.Contains(out, "untrusted") {
			t.Errorf("gemini mcp list in an untrusted folder: %q\n%s", l, out)
		}
		// The user trusts the folder in Gemini (here: its file, as Gemini writes it).
		writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+root+`": "TRUST_FOLDER"}`)
		out = appCmd(t, env, root, "gemini", "mcp", "list")
		for _, name := range []string{"berth", "berth-http", "berth-sse"} {
			if l := appLine(out, name); !strings.Contains(l, "Connected") {
				t.Errorf("gemini mcp list: %s is not Connected (%q):\n%s", name, l, out)
			}
		}
		if appLine(out, "git") == "" {
			t.Errorf("gemini mcp list lost the user's git server:\n%s", out)
		}
	})

	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(home, ".codex", "config.toml")
		writeFile(t, file, codexBefore)
		berth(t, "ide-config", "codex", "--write")
		berth(t, "ide-config", "codex", "--transport", "http", "--name", "berth-http", "--write")
		raw := mustRead(t, file)
		if !bytes.HasPrefix(raw, []byte(codexBefore[:strings.Index(codexBefore, "[profiles.fast]")])) || !bytes.Contains(raw, []byte("[profiles.fast]\nmodel = \"o4-mini\"\n")) {
			t.Errorf("Codex's comments or tables changed:\n%s", raw)
		}
		var cfg struct {
			Model      string                    `toml:"model"`
			Profiles   map[string]map[string]any `toml:"profiles"`
			MCPServers map[string]struct {
				Command string            `toml:"command"`
				Args    []string          `toml:"args"`
				Env     map[string]string `toml:"env"`
				URL     string            `toml:"url"`
			} `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("go-toml cannot read %s: %v\n%s", file, err, raw)
		}
		if s := cfg.MCPServers["berth-agents"]; s.Command != brokertest.Shim(t) || strings.Join(s.Args, " ") != "--project "+root || s.Env["BERTH_HOME"] != b.Home {
			t.Errorf("berth-agents: %+v", s)
		}
		if cfg.Model != "o3" || cfg.Profiles["fast"]["model"] != "o4-mini" || cfg.MCPServers["docs"].Env["DOCS_TOKEN"] != "t" {
			t.Errorf("Codex's settings changed: %+v", cfg)
		}
		var listed []struct {
			Name      string         `json:"name"`
			Enabled   bool           `json:"enabled"`
			Transport map[string]any `json:"transport"`
		}
		out := appCmd(t, env, root, "codex", "mcp", "list", "--json")
		if err := json.Unmarshal([]byte(out[strings.Index(out, "["):strings.LastIndex(out, "]")+1]), &listed); err != nil {
			t.Fatalf("codex mcp list --json: %v\n%s", err, out)
		}
		got := map[string]map[string]any{}
		for _, s := range listed {
			got[s.Name] = s.Transport
		}
		if tr := got["berth-agents"]; tr["type"] != "stdio" || tr["command"] != brokertest.Shim(t) {
			t.Errorf("codex reads berth-agents as %v", tr)
		}
		if tr := got["berth-http"]; tr["type"] != "streamable_http" || !strings.HasPrefix(tr["url"].(string), "http://127.0.0.1:") {
			t.Errorf("codex reads berth-http as %v", tr)
		}
		if got["docs"] == nil {
			t.Errorf("codex lost the docs server: %v", got)
		}
	})

	t.Run("opencode", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(root, "opencode.json")
		writeFile(t, file, opencodeBefore)
		berth(t, "ide-config", "opencode", "--write")
		berth(t, "ide-config", "opencode", "--transport", "http", "--name", "berth-http", "--write")
		raw := mustRead(t, file)
		std, err := hujson.Standardize(bytes.Clone(raw))
		if err != nil || !bytes.Contains(raw, []byte("// the team's model")) {
			t.Fatalf("opencode.json (%v):\n%s", err, raw)
		}
		var top map[string]any
		if err := json.Unmarshal(std, &top); err != nil || top["model"] != "anthropic/claude-sonnet-4-5" || top["$schema"] == nil {
			t.Errorf("opencode's settings changed (%v): %v", err, top)
		}
		out := appCmd(t, env, root, "opencode", "mcp", "list")
		for _, name := range []string{"berth", "berth-http"} {
			if l := appLine(out, name); !strings.Contains(strings.ToLower(l), "connected") {
				t.Errorf("opencode mcp list: %s is not connected (%q):\n%s", name, l, out)
			}
		}
		if appLine(out, "fetch") == "" {
			t.Errorf("opencode mcp list lost the fetch server:\n%s", out)
		}
	})
}

// TestAgentAppsImportTheirServers: `berth ide-config import APP` moves
// the servers of a project's .mcp.json (Claude Code) and opencode.json
// into the project's config, and of the user's config.toml (Codex, with
// --scope user) into the broker's; each app's own mcp list then reads
// its file with Berth's entry and the servers Berth left (a token in a
// header), nothing else; the project files get no path of this machine.
// The apps run beside each other, each on a project of its own.
func TestAgentAppsImportTheirServers(t *testing.T) {
	t.Parallel() // minutes of the apps' own start-up, beside the other slow tests
	brokertest.NodeModules(t, appsDir, "@anthropic-ai/claude-code", "the agent apps on npm")
	b := brokertest.StartBroker(t, brokertest.Options{})
	home := userHome(t)
	env := appEnv(t, home, b.Home)
	run := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(brokertest.Berth(t), args...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("berth %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, tc := range []struct {
		app, file, body string
		args            []string
		user            bool // the app's file is the user's
		list            []string
	}{
		{"claude-code", ".mcp.json", `{"mcpServers": {
  "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}},
  "api": {"type": "http", "url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
}}
`, nil, false, []string{"claude", "mcp", "list"}},
		{"opencode", "opencode.json", `{
  "$schema": "https://opencode.ai/config.json",
  // shared with the team
  "mcp": {
    "memory": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]},
    "api": {"type": "remote", "url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer {env:API_TOKEN}"}}
  }
}
`, nil, false, []string{"opencode", "mcp", "list"}},
		{"codex", "", `# mine
model = "o3"

[mcp_servers.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]

[mcp_servers.api]
url = "http://127.0.0.1:3001/mcp"
bearer_token_env_var = "API_TOKEN"
`, []string{"--scope", "user"}, true, []string{"codex", "mcp", "list"}},
	} {
		t.Run(tc.app, func(t *testing.T) {
			t.Parallel()
			root := brokertest.Project(t, "imp-"+tc.app, nil)
			file := filepath.Join(root, tc.file)
			if tc.user {
				file = filepath.Join(home, ".codex", "config.toml")
			}
			writeFile(t, file, tc.body)
			out := run(t, root, append([]string{"ide-config", "import", tc.app}, tc.args...)...)
			target := filepath.Join(root, ".praxis-os", "config.yaml")
			if tc.user {
				target = filepath.Join(b.Home, "config.yaml") // BERTH_HOME is set: the broker reads its config there
			}
			if !strings.Contains(out, "imported 1 server(s) from "+file+" into "+target) || !strings.Contains(out, "  api: it sends HTTP headers") {
				t.Errorf("import output:\n%s", out)
			}
			if cfg := mustRead(t, target); !strings.Contains(string(cfg), "memory:\n    command: npx\n") {
				t.Errorf("%s:\n%s", target, cfg)
			}
			raw := mustRead(t, file)
			if !tc.user && (bytes.Contains(raw, []byte(root)) || bytes.Contains(raw, []byte(brokertest.Binaries(t)))) {
				t.Errorf("the project's file names a path of this machine:\n%s", raw)
			}
			listed := appCmd(t, env, root, tc.list[0], tc.list[1:]...)
			berthName := "berth"
			if tc.user {
				berthName = "berth-imp-codex"
			}
			if appLine(listed, berthName) == "" || appLine(listed, "api") == "" || appLine(listed, "memory") != "" {
				t.Errorf("%s after the import:\n%s\n%s", strings.Join(tc.list, " "), listed, raw)
			}
		})
	}
}
