package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/viper"
)

const benchYAML = `# project settings
mcp:
  http_port: 4300
  enabled_tool_groups: [rag, workflow, pos]
  max_sessions: 8
rag:
  standards_path: docs/standards
servers:
  memory:
    command: npx
    args: [-y, "@modelcontextprotocol/server-memory"]
    env: {MEMORY_FILE_PATH: /tmp/m.jsonl}
  web:
    url: http://127.0.0.1:3001/mcp
    share: user
    call_timeout: 30s
`

// BenchmarkLoad is what a mount pays to read a project's config: the
// strict reader (parse, check every key and form, decode), against the
// reading with viper that it replaced (ReadInConfig and Unmarshal, and
// yaml.v3 again for the servers), on the same file in the same run.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(benchYAML), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(root); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("viper-as-before", func(b *testing.B) {
		for b.Loop() {
			cfg := Default()
			v := viper.New()
			v.SetConfigFile(file)
			if err := v.ReadInConfig(); err != nil {
				b.Fatal(err)
			}
			if err := v.Unmarshal(&cfg); err != nil {
				b.Fatal(err)
			}
			if _, err := ReadServers(file); err != nil {
				b.Fatal(err)
			}
		}
	})
}
