package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// FuzzLoad feeds arbitrary bytes as the project's config.yaml and
// config.json: Load never panics, an error names the file, and a config it
// accepts is valid (a port, known groups, paths inside the project, servers
// with a valid name, one of command or url, and known share and start).
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"mcp:\n  http_port: 4300\n  enabled_tool_groups: [rag, pos]\n",
		"rag:\n  standards_path: ../outside\n",
		"mcp: [1, 2]\n",
		"mcp:\n  http_port: 99999\n",
		`{"mcp": {"http_port": 4242, "max_sessions": 3}}`,
		"\xff\xfe\x00",
		"a: &a [*a]\n",
		"servers:\n  memory: {command: npx, args: [-y, m], env: {K: v}, share: user, call_timeout: 5s}\n",
		"servers:\n  a__b: {url: 'http://127.0.0.1:1/mcp', tools: {deny: ['[']}}\n",
		`{"servers": {"m": {"url": "http://h/mcp", "command": "x", "start": "eager"}}}`,
		"rag:\n  allow_outside: [../shared, ~/notes, /srv/docs]\n",
		"rag:\n  allow_outside: ['']\n",
		"servers: {m: null}\n",
		"servers:\n  m: {command: \"a\\e[2K\", args: [\"\\r\\e[8m\"], roots: [src, /x], env: {NODE_OPTIONS: --require ./x.js}}\n",
		"servers:\n  m: {command: x, roots: []}\n",
		"",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		root := t.TempDir()
		name := "config.yaml"
		if asJSON {
			name = "config.json"
		}
		file := filepath.Join(root, Dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(root)
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if cfg.MCP.HTTPPort < 1 || cfg.MCP.HTTPPort > 65535 {
			t.Fatalf("accepted port %d", cfg.MCP.HTTPPort)
		}
		for _, g := range cfg.MCP.EnabledToolGroups {
			if g != GroupRAG && g != GroupWorkflow && g != GroupPOS {
				t.Fatalf("accepted group %q", g)
			}
		}
		for _, d := range cfg.RAG.AllowOutside {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d {
				t.Fatalf("rag.allow_outside entry %q is not a clean absolute path", d)
			}
		}
		for _, p := range []string{cfg.RAG.StandardsPath, cfg.RAG.UsagePath, cfg.RAG.WorkflowsPath} {
			if filepath.IsAbs(p) || !filepath.IsLocal(filepath.Clean(p)) {
				t.Fatalf("accepted path %q", p)
			}
		}
		for name, s := range cfg.Servers {
			if ValidServerName(name) != nil || (s.Command == "") == (s.URL == "") ||
				(s.Share != ShareProject && s.Share != ShareUser) || (s.Start != StartLazy && s.Start != StartEager) {
				t.Fatalf("accepted server %q: %+v", name, s)
			}
			if strings.ContainsFunc(s.Command+s.Cwd+s.URL+strings.Join(s.Roots, ""), unicode.IsControl) || len(s.Args) > MaxArgs {
				t.Fatalf("accepted server %q with a control character or too many args: %+v", name, s)
			}
		}
	})
}

// FuzzAddServers adds a server to arbitrary YAML: it either refuses, or
// the result loads, holds the new server, and keeps every line of the
// input when the input had a block servers: section or none.
func FuzzAddServers(f *testing.F) {
	for _, seed := range []string{"", "# c\nmcp:\n  http_port: 1\n", "servers:\n  a:\n    command: x\n\nrag: {}\n",
		"servers: {}\n", "servers:\n", "servers: {a: {command: x}}\n", "- 1\n", "mcp: [\n", "servers:\n    a: {url: 'http://h/mcp'}\n# end\n"} {
		f.Add([]byte(seed))
	}
	add := []NamedServer{{Name: "memory", Comment: "imported", Server: Server{Command: "npx", Args: []string{"-y", "x: y", "#z"}, Env: map[string]string{"K": "v w"}}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := AddServers("config.yaml", data, add, ProjectSchema())
		if err != nil {
			return
		}
		doc, err := ParseFile("config.yaml", out)
		if err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, out)
		}
		servers, err := ServersIn("config.yaml", doc)
		if err != nil {
			t.Fatalf("result's servers: %v\n%s", err, out)
		}
		got, ok := servers["memory"]
		if !ok || got.Command != "npx" || len(got.Args) != 3 || got.Args[1] != "x: y" || got.Env["K"] != "v w" {
			t.Fatalf("added server reads back as %+v\n%s", got, out)
		}
	})
}
