package ideconfig

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/config"
	"github.com/google/go-cmp/cmp"
)

// appFiles are files as each app writes them: another server, settings
// Berth does not know, comments where the format allows them. comment is
// a line each must keep.
var appFiles = map[string]struct{ body, comment string }{
	"cursor": {`{
  // team servers
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
  },
}
`, "// team servers"},
	"claude": {`{"globalShortcut": "Ctrl+Space", "mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`, `"globalShortcut": "Ctrl+Space"`},
	"vscode": {`{
	"inputs": [{"type": "promptString", "id": "t", "password": true}],
	// the servers
	"servers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}
}
`, "// the servers"},
	"windsurf": {`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "disabled": false}}}`, `"disabled": false`},
	"claude-code": {`{
  "numStartups": 7,
  "mcpServers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}},
  "projects": {"/src/shop": {"allowedTools": [], "mcpServers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}}}}
}
`, `"numStartups": 7`},
	"gemini": {`{
  // my look
  "theme": "Dracula",
  "mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "timeout": 5000, "trust": false}}
}
`, "// my look"},
	"codex": {`# Codex settings
model = "o3"

[mcp_servers.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
startup_timeout_sec = 20 # slow to start

[mcp_servers.memory.env]
MEMORY_FILE = "/tmp/m.json"

# faster profile
[profiles.fast]
model = "o4-mini"
`, "# faster profile"},
	"zed": {`// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}},
  },
}
`, "// Zed settings"},
	"cline": {`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "disabled": false, "autoApprove": ["read_graph"]}}}`, `"autoApprove": ["read_graph"]`},
	"goose": {`# goose settings
GOOSE_PROVIDER: anthropic
GOOSE_MODEL: claude-sonnet-4-5
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  memory:
    args:
    - -y
    - '@modelcontextprotocol/server-memory'
    cmd: npx
    enabled: true
    envs: {}
    env_keys: []
    name: memory
    timeout: 300
    type: stdio
# end of extensions
GOOSE_MODE: smart_approve
`, "# end of extensions"},
	"opencode": {`{
  "$schema": "https://opencode.ai/config.json",
  // the model
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {"memory": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-memory"], "enabled": true}}
}
`, "// the model"},
}

// TestEveryAppMergesItsEntry: for each app, scope and transport it has,
// the entry merges into a file as the app writes it: the entry reads
// back in the app's form, the other server, settings and comment stay,
// and merging again changes nothing.
func TestEveryAppMergesItsEntry(t *testing.T) {
	for _, app := range Apps {
		f, ok := appFiles[app.Name]
		if !ok {
			t.Fatalf("no file for %s", app.Name)
		}
		for _, scope := range app.Scopes() {
			for _, tr := range app.Transports() {
				t.Run(app.Name+"/"+string(scope)+"/"+tr, func(t *testing.T) {
					p, err := NewPlan(app, Options{Project: "/src/shop", Shim: []string{"/opt/bin/berth-shim"}, Home: "/h", Scope: scope, Transport: tr, URL: "http://127.0.0.1:4242/mcp"})
					if err != nil {
						t.Fatal(err)
					}
					out, err := p.apply([]byte(f.body))
					if err != nil {
						t.Fatalf("%v\n%s", err, f.body)
					}
					if !strings.Contains(string(out), f.comment) {
						t.Errorf("lost %q:\n%s", f.comment, out)
					}
					before, _ := decodePlain(app.format, []byte(f.body))
					after, err := decodePlain(app.format, out)
					if err != nil {
						t.Fatal(err)
					}
					for k, v := range before {
						if k != p.Keys[0] && !reflect.DeepEqual(normalize(v), normalize(after[k])) {
							t.Errorf("key %s changed: %v -> %v", k, v, after[k])
						}
					}
					_, was, _ := mustDoc(t, app, []byte(f.body)).servers(p.Keys)
					_, now, _ := mustDoc(t, app, out).servers(p.Keys)
					for name, v := range was {
						if name != p.Name && !reflect.DeepEqual(normalize(v), normalize(now[name])) {
							t.Errorf("server %s changed: %v -> %v", name, v, now[name])
						}
					}
					if !reflect.DeepEqual(normalize(now[p.Name]), normalize(p.value.plain())) {
						t.Errorf("entry %v, want %v", now[p.Name], p.value.plain())
					}
					if tr == TransportStdio {
						shims, _, err := BerthEntries(app, out, p.Keys)
						if err != nil || shims[p.Name].Command != "/opt/bin/berth-shim" || !slices.Equal(shims[p.Name].Args, []string{"--project", "/src/shop"}) || shims[p.Name].Env["BERTH_HOME"] != "/h" {
							t.Errorf("BerthEntries: %v %v", shims, err)
						}
					} else if _, urls, _ := BerthEntries(app, out, p.Keys); urls[p.Name] != p.Entry.URL {
						t.Errorf("URL entries: %v", urls)
					}
					again, err := p.apply(out)
					if err != nil || string(again) != string(out) {
						t.Errorf("merging again changed the file (%v):\n%s\n---\n%s", err, out, again)
					}
				})
			}
		}
	}
}

func mustDoc(t *testing.T, app App, data []byte) doc {
	t.Helper()
	d, err := parseDoc(app.format, data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestImportFromEveryApp: the other server of each app's file imports as
// the same Berth server, and leaving only Berth removes it and keeps the
// rest.
func TestImportFromEveryApp(t *testing.T) {
	want := config.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}
	for _, app := range Apps {
		scope := app.Scopes()[0]
		p, err := NewPlan(app, Options{Project: "/src/shop", Shim: []string{"/opt/bin/berth-shim"}, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		f := appFiles[app.Name]
		found, err := ReadImports(app, []byte(f.body), p.Keys, "/src/shop")
		if err != nil {
			t.Fatalf("%s: %v", app.Name, err)
		}
		if len(found.Imports) != 1 || found.Imports[0].From != "memory" {
			t.Fatalf("%s: %+v", app.Name, found)
		}
		got := found.Imports[0].Server
		if app.Name == "codex" {
			want := want
			want.Env = map[string]string{"MEMORY_FILE": "/tmp/m.json"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("codex (-want +got):\n%s", d)
			}
		} else if got.Command != want.Command || !slices.Equal(got.Args, want.Args) || len(got.Env) != 0 || got.URL != "" || !got.IsEnabled() {
			t.Errorf("%s: imported %+v", app.Name, got)
		}
		if app.Name == "goose" && (len(found.Skips) != 1 || !strings.Contains(found.Skips[0].Why, `Goose "builtin" extension`)) {
			t.Errorf("goose's built-in developer extension: %+v", found.Skips)
		}
		out, err := LeaveOnlyBerth([]byte(f.body), p, found.Imports)
		if err != nil {
			t.Fatalf("%s: %v", app.Name, err)
		}
		if !strings.Contains(string(out), f.comment) && !strings.Contains(f.comment, "Approve") && !strings.Contains(f.comment, "disabled") {
			t.Errorf("%s lost %q:\n%s", app.Name, f.comment, out)
		}
		names, _, err := mustDoc(t, app, out).servers(p.Keys)
		if err != nil || slices.Contains(names, "memory") || !slices.Contains(names, p.Name) {
			t.Errorf("%s after import: %v %v\n%s", app.Name, names, err, out)
		}
	}
}

// TestImportReadsEachDialect: what each app writes for a URL, a disabled
// server, variables and secrets comes out as Berth declares it, or
// stays in the app with the reason.
func TestImportReadsEachDialect(t *testing.T) {
	for _, tc := range []struct {
		app, body string
		imports   map[string]config.Server
		skips     map[string]string
	}{
		{"opencode", `{"mcp": {
			"web": {"type": "remote", "url": "http://127.0.0.1:3001/mcp", "enabled": false},
			"env": {"type": "local", "command": ["node", "s.js"], "environment": {"K": "{env:K}"}},
			"off": {"type": "local", "command": ["node", "t.js"], "enabled": false}}}`,
			map[string]config.Server{"web": {URL: "http://127.0.0.1:3001/mcp", Enabled: new(false)}, "off": {Command: "node", Args: []string{"t.js"}, Enabled: new(false)}},
			map[string]string{"env": "{env:K}"}},
		{"goose", "extensions:\n  web:\n    type: streamable_http\n    uri: http://127.0.0.1:3001/mcp\n    enabled: true\n    name: web\n  keyed:\n    type: stdio\n    cmd: node\n    args: [k.js]\n    env_keys: [API_KEY]\n    enabled: true\n  old:\n    type: sse\n    uri: http://127.0.0.1:3002/sse\n",
			map[string]config.Server{"web": {URL: "http://127.0.0.1:3001/mcp"}},
			map[string]string{"keyed": "env_keys", "old": "SSE"}},
		{"codex", "[mcp_servers.gh]\nurl = \"https://api.example/mcp\"\nbearer_token_env_var = \"GH\"\n\n[mcp_servers.fwd]\ncommand = \"x\"\nenv_vars = [\"HOME_DIR\"]\n\n[mcp_servers.ok]\ncommand = \"y\"\nenabled = false\n",
			map[string]config.Server{"ok": {Command: "y", Enabled: new(false)}},
			map[string]string{"gh": "headers", "fwd": "env_vars"}},
		{"codex", "mcp_servers.inline = { command = \"z\" }\n", nil, map[string]string{"inline": "keys of the file's top"}},
		{"gemini", `{"mcpServers": {"h": {"httpUrl": "http://127.0.0.1:1/mcp"}, "s": {"type": "sse", "url": "http://127.0.0.1:2/sse"}, "v": {"command": "x", "env": {"T": "$TOKEN"}}}}`,
			map[string]config.Server{"h": {URL: "http://127.0.0.1:1/mcp"}},
			map[string]string{"s": "SSE", "v": "$TOKEN"}},
		{"zed", `{"context_servers": {"old": {"source": "custom", "command": {"path": "node", "args": ["o.js"], "env": {"A": "1"}}, "settings": {}}, "ext": {"settings": {"k": 1}}}}`,
			map[string]config.Server{"old": {Command: "node", Args: []string{"o.js"}, Env: map[string]string{"A": "1"}}},
			map[string]string{"ext": "extension"}},
		{"cline", `{"mcpServers": {"r": {"type": "streamableHttp", "url": "http://127.0.0.1:5/mcp", "disabled": true, "autoApprove": []}}}`,
			map[string]config.Server{"r": {URL: "http://127.0.0.1:5/mcp", Enabled: new(false)}}, nil},
		{"claude-code", `{"mcpServers": {"w": {"type": "http", "url": "http://127.0.0.1:6/mcp", "headers": {"Authorization": "Bearer ${T}"}}}}`,
			nil, map[string]string{"w": "headers"}},
	} {
		app, _ := Lookup(tc.app)
		found, err := ReadImports(app, []byte(tc.body), []string{app.ServersKey}, "/src/shop")
		if err != nil {
			t.Fatalf("%s: %v", tc.app, err)
		}
		got := map[string]config.Server{}
		for _, im := range found.Imports {
			got[im.From] = im.Server
		}
		if d := cmp.Diff(tc.imports, got, cmp.Comparer(func(a, b config.Server) bool { return a.Digest() == b.Digest() && a.IsEnabled() == b.IsEnabled() })); len(tc.imports)+len(got) > 0 && d != "" {
			t.Errorf("%s imports (-want +got):\n%s", tc.app, d)
		}
		skipped := map[string]string{}
		for _, s := range found.Skips {
			skipped[s.Name] = s.Why
		}
		for name, mention := range tc.skips {
			if !strings.Contains(skipped[name], mention) {
				t.Errorf("%s: %s skipped with %q, want a reason mentioning %q", tc.app, name, skipped[name], mention)
			}
		}
		if len(skipped) != len(tc.skips) {
			t.Errorf("%s: skipped %v", tc.app, skipped)
		}
	}
}
