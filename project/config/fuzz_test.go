package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/berth-dev/berth/project/budgettest"
)

// hostileConfigs are config files written to cost a reader time and
// memory: nesting, anchors that repeat each other, long lists, long lines.
// Every reader of config files must refuse or read each within the budget
// of a refusal.
func hostileConfigs() []string {
	laughs := "servers:\n  m:\n    command: x\n    env: &e0 {a: b, c: d, e: f, g: h, i: j, k: l, m: n, o: p, q: r, s: t}\n"
	for i := 1; i < 9; i++ {
		laughs += "  m" + string(rune('0'+i)) + ": {command: x, args: &e" + string(rune('0'+i)) + " [" +
			strings.Repeat("*e"+string(rune('0'+i-1))+", ", 9) + "*e" + string(rune('0'+i-1)) + "]}\n"
	}
	return []string{
		"servers: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000), // over MaxFileSize
		"servers: " + strings.Repeat("[", 30_000) + strings.Repeat("]", 30_000),
		"servers: " + strings.Repeat("{a: ", 12_000) + "1" + strings.Repeat("}", 12_000),
		strings.Repeat("- ", 30_000) + "x\n",
		staircase(300),
		laughs,
		"mcp:\n  enabled_tool_groups: [" + strings.Repeat("rag, ", 12_000) + "rag]\n",
		"rag:\n  standards_path: \"" + strings.Repeat("\\\"", 30_000) + "\"\n",
		"a: &a [*a, *a]\nservers: *a\n",
		`{"mcp": ` + strings.Repeat(`{"a": `, 5_000) + "1" + strings.Repeat("}", 5_000) + "}",
	}
}

// staircase is a key nested n levels deep by indentation alone.
func staircase(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// FuzzLoad feeds arbitrary bytes as the project's config.yaml and
// config.json: Load never panics, it refuses or reads within the budget
// of a refusal, an error names the file, and a config it accepts is valid
// (a port, known groups, paths inside the project, servers with a valid
// name, one of command or url, and known share and start).
func FuzzLoad(f *testing.F) {
	for _, seed := range append(hostileConfigs(), []string{
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
	}...) {
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
		var cfg Config
		var err error
		cost := budgettest.Measure(func() { cfg, err = Load(root) })
		if over := cost.Over(budgettest.Refusal, budgettest.Slack); over != nil {
			t.Fatalf("Load of %d bytes: %v (err %v)", len(data), over, err)
		}
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
