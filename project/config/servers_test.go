package config

import (
	"fmt"
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
		{"null server", "servers:\n  m: null\n", "servers.m is empty"},
		{"empty server", "servers:\n  ok: {command: x}\n  m:\n", "servers.m is empty"},
		{"flow null server", "servers: {m: null}\n", "servers.m is empty"},
		{"NUL in command", "servers:\n  m: {command: \"node\\0x\"}\n", "servers.m.command"},
		{"ESC in command", "servers:\n  m: {command: \"npx\\e[8m\"}\n", "control character U+001B"},
		{"CR in cwd", "servers:\n  m: {command: x, cwd: \"a\\rb\"}\n", "servers.m.cwd"},
		{"NUL in arg", "servers:\n  m: {command: x, args: [\"a\\0\"]}\n", "servers.m.args[0]"},
		{"NUL in env", "servers:\n  m: {command: x, env: {A: \"\\0\"}}\n", "servers.m.env.A"},
		{"empty root", "servers:\n  m: {command: x, roots: [\"\"]}\n", "servers.m.roots[0] is empty"},
		{"too many args", "servers:\n  m: {command: x, args: [" + strings.Repeat("a,", MaxArgs) + "a]}\n", "servers.m.args: 257 entries"},
		{"too big", "servers:\n  m: {command: x, args: [" + strings.Repeat(strings.Repeat("a", 1000)+",", 20) + "]}\n", "the definition holds"},
		{"too big once escaped", "servers:\n  m: {command: x, args: [\"" + strings.Repeat("\\x01", 3000) + "\"]}\n", "the definition holds 18001 bytes"},
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
		"command":  {Command: "nodejs", Args: base.Args, Env: base.Env},
		"args":     {Command: "node", Args: []string{"b.js"}, Env: base.Env},
		"env":      {Command: "node", Args: base.Args, Env: map[string]string{"A": "1", "B": "3"}},
		"cwd":      {Command: "node", Args: base.Args, Env: base.Env, Cwd: "sub"},
		"share":    {Command: "node", Args: base.Args, Env: base.Env, Share: ShareUser},
		"roots":    {Command: "node", Args: base.Args, Env: base.Env, Roots: []string{"src"}},
		"no roots": {Command: "node", Args: base.Args, Env: base.Env, Roots: []string{}},
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

// TestServersBounds: a config may declare at most MaxServers servers, and
// a definition may hold tabs and newlines in its args (a script) but
// never a NUL; roots keep the difference between unset and empty.
func TestServersBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("servers:\n")
	for i := range MaxServers + 1 {
		fmt.Fprintf(&b, "  s%d: {command: x}\n", i)
	}
	root := t.TempDir()
	write(t, root, "config.yaml", b.String())
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "33 servers declared, at most 32") {
		t.Errorf("33 servers: %v", err)
	}
	write(t, root, "config.yaml", "servers:\n  sh: {command: sh, args: [-c, \"echo a\\n\\techo b\"], roots: []}\n  fs: {command: x, roots: [src]}\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers["sh"].Args[1]; got != "echo a\n\techo b" {
		t.Errorf("args[1] = %q", got)
	}
	if r := c.Servers["sh"].Roots; r == nil || len(r) != 0 {
		t.Errorf("roots: [] read as %#v, want empty and set", r)
	}
	if r := c.Servers["fs"].Roots; len(r) != 1 || r[0] != "src" {
		t.Errorf("roots: [src] read as %#v", r)
	}
}
