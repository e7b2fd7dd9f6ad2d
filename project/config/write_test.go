package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddServersKeepsTheFile(t *testing.T) {
	mem := NamedServer{Name: "memory", Comment: "imported from Cursor", Server: Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}}
	web := NamedServer{Name: "web", Server: Server{URL: "http://127.0.0.1:3001/mcp", Env: nil}}
	for _, tc := range []struct{ name, in, want string }{
		{"empty file", "", "servers:\n  # imported from Cursor\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n  web:\n    url: http://127.0.0.1:3001/mcp\n"},
		{"no section", "# my project\nmcp:\n  http_port: 4300 # fixed\n\nrag:\n    standards_path: docs\n",
			"# my project\nmcp:\n  http_port: 4300 # fixed\n\nrag:\n    standards_path: docs\n\nservers:\n  # imported from Cursor\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n  web:\n    url: http://127.0.0.1:3001/mcp\n"},
		{"section in the middle", "servers:\n    # the old one\n    old:\n        command: x\n\n# tools\nmcp:\n  http_port: 1\n",
			"servers:\n    # the old one\n    old:\n        command: x\n    # imported from Cursor\n    memory:\n      command: npx\n      args: [-y, '@modelcontextprotocol/server-memory']\n    web:\n      url: http://127.0.0.1:3001/mcp\n\n# tools\nmcp:\n  http_port: 1\n"},
		{"empty flow section", "mcp: {http_port: 1}\nservers: {} # none yet\n",
			"mcp: {http_port: 1}\nservers:\n  # imported from Cursor\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n  web:\n    url: http://127.0.0.1:3001/mcp\n"},
		{"null section", "servers:\nmcp: {http_port: 1}\n",
			"servers:\n  # imported from Cursor\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n  web:\n    url: http://127.0.0.1:3001/mcp\nmcp: {http_port: 1}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := AddServers(filepath.Join(t.TempDir(), "config.yaml"), []byte(tc.in), []NamedServer{mem, web}, ProjectSchema())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
	// A one-line section with entries is rewritten; the result still loads.
	out, err := AddServers("config.yaml", []byte("servers: {old: {command: x}} # mine\n"), []NamedServer{mem}, ProjectSchema())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkData("config.yaml", out, ProjectSchema(), []NamedServer{mem}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
