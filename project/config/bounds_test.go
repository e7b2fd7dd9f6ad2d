package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/berth-dev/berth/project/budgettest"
)

// TestHostileConfigsAreRefusedCheaply: each hostile file is refused with
// an error that names the bound, the place and the fix, within the budget
// of a refusal, before (or without) a parser's cost.
func TestHostileConfigsAreRefusedCheaply(t *testing.T) {
	hostile := hostileConfigs()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"200 KB of brackets", hostile[0], `config.yaml: 200009 bytes, over the 64 KiB a config file may hold: keep only settings in it (docs/configuration.md)`},
		{"nested brackets", hostile[1], `config.yaml:1:41: sections and lists nested more than 32 deep: a config file needs a few levels (write the values out flat)`},
		{"nested sections", hostile[2], `config.yaml:1:134: sections and lists nested more than 32 deep`},
		{"nested entries", hostile[3], `config.yaml:1:63: sections and lists nested more than 32 deep`},
		{"a staircase of keys", hostile[4], `config.yaml:33:33: sections and lists nested more than 32 deep`},
		{"aliases of aliases", hostile[5], `config.yaml:8:36: the file holds over 65536 keys and values once its aliases (*name) are expanded, or an alias that contains itself`},
		{"an alias inside itself", hostile[8], `config.yaml:1:8: the file holds over 65536 keys and values once its aliases (*name) are expanded, or an alias that contains itself`},
		{"nested JSON", hostile[9], `config.json:1:189: sections and lists nested more than 32 deep`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			name := "config.yaml"
			if strings.HasPrefix(tc.body, "{") {
				name = "config.json"
			}
			write(t, root, name, tc.body)
			var err error
			cost := budgettest.Measure(func() { _, err = Load(root) })
			if err == nil || !strings.Contains(err.Error(), filepath.Join(root, Dir, tc.want)) || !IsError(err) {
				t.Fatalf("Load:\n got %v\nwant %s", err, tc.want)
			}
			if over := cost.Over(budgettest.Refusal, budgettest.Slack); over != nil {
				t.Error(over)
			}
			t.Logf("refused in %s", cost)
		})
	}
}

// TestLongButFlatConfigsLoad: a file within the bounds loads, however
// long its lists, and anchors that are repeated a little are fine.
func TestLongButFlatConfigsLoad(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.yaml", hostileConfigs()[6])
	if _, err := Load(root); err != nil {
		t.Fatal(err)
	}
	write(t, root, "config.yaml", "servers:\n  a: {command: x, env: &e {K: v}}\n  b: {command: y, env: *e}\n")
	c, err := Load(root)
	if err != nil || c.Servers["b"].Env["K"] != "v" {
		t.Fatalf("%+v %v", c.Servers, err)
	}
}

// TestConfigThatIsNotAFile: a FIFO (or a device) where the config file
// should be is refused without reading it: reading would block or never end.
func TestConfigThatIsNotAFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "config.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := Load(root)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Load = %v, want a refusal of the FIFO", err)
	}
}
