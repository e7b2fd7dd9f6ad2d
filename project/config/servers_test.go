package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadServers(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.yaml", `
servers:
  memory:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-memory"]
    env: {MEMORY_FILE_PATH: /tmp/m.jsonl, Port: 3000}
  web_api:
    url: http://127.0.0.1:3001/mcp
    share: user
    start: eager
    enabled: false
    call_timeout: 90s
    tools: {allow: ["get_*"], deny: [get_secret]}
`)
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := map[string]Server{
		"memory": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
			Env:   map[string]string{"MEMORY_FILE_PATH": "/tmp/m.jsonl", "Port": "3000"},
			Share: ShareProject, Start: StartLazy},
		"web_api": {URL: "http://127.0.0.1:3001/mcp", Share: ShareUser, Start: StartEager, Enabled: &no,
			CallTimeout: 90 * time.Second, Tools: ToolFilter{Allow: []string{"get_*"}, Deny: []string{"get_secret"}}},
	}
	if d := cmp.Diff(want, c.Servers); d != "" {
		t.Fatalf("servers (-want +got):\n%s", d)
	}
	if !c.Servers["memory"].IsEnabled() || c.Servers["web_api"].IsEnabled() {
		t.Errorf("enabled defaults wrong")
	}
}

func TestLoadServersJSON(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.json", "{\n\t\"servers\": {\"everything\": {\"command\": \"node\", \"args\": [\"x.js\"], \"env\": {\"API_KEY\": \"k\"}, \"call_timeout\": \"2s\"}}\n}")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers["everything"]
	if s.Command != "node" || s.Env["API_KEY"] != "k" || s.CallTimeout != 2*time.Second || s.Share != ShareProject {
		t.Fatalf("json servers not applied: %+v", s)
	}
}

func TestLoadServersErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"both", "servers:\n  m: {command: x, url: 'http://127.0.0.1:1/mcp'}\n", "servers.m: both command and url"},
		{"neither", "servers:\n  m: {args: [a]}\n", "servers.m: set command"},
		{"bad share", "servers:\n  m: {command: x, share: team}\n", `servers.m.share "team": use project`},
		{"bad start", "servers:\n  m: {command: x, start: now}\n", `servers.m.start "now"`},
		{"upper name", "servers:\n  Memory: {command: x}\n", `servers.Memory: "Memory" is not a valid tool prefix`},
		{"double underscore", "servers:\n  a__b: {command: x}\n", "not a valid tool prefix"},
		{"trailing underscore", "servers:\n  a_: {command: x}\n", "not a valid tool prefix"},
		{"long name", "servers:\n  " + strings.Repeat("a", 33) + ": {command: x}\n", "not a valid tool prefix"},
		{"bad url", "servers:\n  m: {url: 'ftp://h/x'}\n", "servers.m.url"},
		{"url with args", "servers:\n  m: {url: 'http://127.0.0.1:1/mcp', args: [a]}\n", "apply to a command"},
		{"bad glob", "servers:\n  m: {command: x, tools: {deny: ['[']}}\n", "servers.m.tools.deny"},
		{"bad timeout", "servers:\n  m: {command: x, call_timeout: soon}\n", "servers.m.call_timeout"},
		{"negative timeout", "servers:\n  m: {command: x, call_timeout: -1s}\n", "must not be negative"},
		{"user relative cwd", "servers:\n  m: {command: x, share: user, cwd: sub}\n", "servers.m.cwd"},
		{"env name", "servers:\n  m: {command: x, env: {'A=B': c}}\n", "servers.m.env"},
		{"not a map", "servers:\n  m: [1]\n", "servers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "config.yaml", tc.body)
			_, err := Load(root)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "config.yaml") {
				t.Fatalf("err = %v, want it to name config.yaml and %q", err, tc.want)
			}
		})
	}
}

func TestServerDigest(t *testing.T) {
	base := Server{Command: "node", Args: []string{"a.js"}, Env: map[string]string{"B": "2", "A": "1"}}
	same := Server{Command: "node", Args: []string{"a.js"}, Env: map[string]string{"A": "1", "B": "2"}, Share: ShareProject,
		Start: StartEager, CallTimeout: time.Second, Tools: ToolFilter{Deny: []string{"x"}}}
	if base.Digest() != same.Digest() {
		t.Errorf("digest changed with map order, defaults, start, tools or call_timeout")
	}
	if len(base.Digest()) != 64 {
		t.Errorf("digest %q is not hex SHA-256", base.Digest())
	}
	for name, changed := range map[string]Server{
		"command": {Command: "nodejs", Args: base.Args, Env: base.Env},
		"args":    {Command: "node", Args: []string{"b.js"}, Env: base.Env},
		"env":     {Command: "node", Args: base.Args, Env: map[string]string{"A": "1", "B": "3"}},
		"cwd":     {Command: "node", Args: base.Args, Env: base.Env, Cwd: "sub"},
		"share":   {Command: "node", Args: base.Args, Env: base.Env, Share: ShareUser},
	} {
		if changed.Digest() == base.Digest() {
			t.Errorf("changing %s kept the digest", name)
		}
	}
}

func TestToolFilter(t *testing.T) {
	f := ToolFilter{Allow: []string{"read_*", "search"}, Deny: []string{"read_secret"}}
	for name, want := range map[string]bool{"read_graph": true, "search": true, "read_secret": false, "delete_all": false} {
		if got := f.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if !(ToolFilter{}).Allows("anything") {
		t.Error("an empty filter refuses a tool")
	}
}
