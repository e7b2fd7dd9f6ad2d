package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root, name, body string) {
	t.Helper()
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name, file, body string
		wantErr          string
		check            func(t *testing.T, c Config)
	}{
		{name: "no file", check: func(t *testing.T, c Config) {
			if c.MCP.HTTPPort != DefaultPort || !c.HasGroup(GroupRAG) || c.HasGroup(GroupPOS) || c.File != "" {
				t.Errorf("defaults wrong: %+v", c)
			}
			if c.MCP.MaxSessions != 10 || c.MCP.MaxToolCalls != 16 {
				t.Errorf("limits default to %d sessions, %d tool calls; want 10 and 16", c.MCP.MaxSessions, c.MCP.MaxToolCalls)
			}
		}},
		{name: "limits", file: "config.yaml", body: "mcp:\n  max_sessions: 0\n  max_tool_calls: 3\n",
			check: func(t *testing.T, c Config) {
				if c.MCP.MaxSessions != 0 || c.MCP.MaxToolCalls != 3 {
					t.Errorf("limits not applied: %+v", c.MCP)
				}
			}},
		{name: "negative limit", file: "config.yaml", body: "mcp:\n  max_tool_calls: -1\n", wantErr: "mcp.max_tool_calls"},
		{name: "yaml", file: "config.yaml", body: "mcp:\n  http_port: 4300\n  enabled_tool_groups: [rag, pos]\nrag:\n  standards_path: docs/std\n",
			check: func(t *testing.T, c Config) {
				if c.MCP.HTTPPort != 4300 || !c.HasGroup(GroupPOS) || c.HasGroup(GroupWorkflow) || c.RAG.StandardsPath != "docs/std" {
					t.Errorf("yaml not applied: %+v", c)
				}
				if c.RAG.UsagePath != filepath.Join(Dir, "usage") {
					t.Errorf("unset key lost its default: %q", c.RAG.UsagePath)
				}
			}},
		{name: "praxis json", file: "config.json", body: `{"mcp": {"http_port": 4400, "max_tools_warning": 5, "http_host": "127.0.0.1"}, "rag": {"index_path": ".praxis-os/.cache/vector_index", "embedding_provider": "local"}}`,
			check: func(t *testing.T, c Config) {
				if c.MCP.HTTPPort != 4400 || c.MCP.MaxToolsWarning != 5 {
					t.Errorf("json not applied: %+v", c)
				}
			}},
		{name: "broken yaml", file: "config.yaml", body: "mcp: [\n", wantErr: "config.yaml"},
		{name: "bad port", file: "config.yaml", body: "mcp:\n  http_port: 70000\n", wantErr: "mcp.http_port"},
		{name: "unknown key in json", file: "config.json", body: `{"mcp": {"http_port": 4400}, "unknown": 1}`, wantErr: `unknown key "unknown"`},
		{name: "escaping path", file: "config.yaml", body: "rag:\n  usage_path: ../outside\n", wantErr: "rag.usage_path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != "" {
				write(t, root, tc.file, tc.body)
			}
			c, err := Load(root)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestYAMLWinsOverJSON(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.json", `{"mcp": {"http_port": 4400}}`)
	write(t, root, "config.yaml", "mcp:\n  http_port: 4500\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.HTTPPort != 4500 {
		t.Fatalf("port %d, want the yaml's 4500", c.MCP.HTTPPort)
	}
}
