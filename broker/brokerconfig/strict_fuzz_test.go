package brokerconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/budgettest"
	"github.com/berth-dev/berth/project/config"
)

// FuzzReadConfig feeds arbitrary bytes as the broker's config file:
// ReadConfig never panics and refuses or reads within the budget of a
// refusal; it refuses with a *config.Error naming the file, or what it
// accepts yields a Config or a validation error, never a silently dropped
// value.
func FuzzReadConfig(f *testing.F) {
	for _, seed := range []string{
		"listen: 127.0.0.1:4241\nports: {start: 4242, end: 4342}\nmount_grace: 1m\n",
		"mount_grace: 5 minutes\n", "port:\n  start: 1\n", "ports: {start: 6000\nauth: none\n",
		"rag:\n  allow_outside: [/srv, ~/x]\n", "servers:\n  memory: {command: npx, args: [-y, m], call_timeout: 5s}\n",
		"idle_timeout: 0\nsession_timeout: 90\n", "home: ~/b\n", "[1, 2]\n", "", "\xff\xfe", "a: &a [*a]\n",
		`{"listen": "", "ports": {"start": 5000, "end": 5001}}`,
		"servers: " + strings.Repeat("[", 30_000) + strings.Repeat("]", 30_000),
		"servers: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000),
		strings.Repeat("- ", 30_000) + "x\n",
		"a: &a [*a, *a]\nports: *a\n",
		"rag:\n  allow_outside: [" + strings.Repeat("/srv, ", 10_000) + "/srv]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		v := NewViper()
		var err error
		cost := budgettest.Measure(func() { err = ReadConfig(v, file) })
		if over := cost.Over(budgettest.Refusal, budgettest.Slack); over != nil {
			t.Fatalf("ReadConfig of %d bytes: %v (err %v)", len(data), over, err)
		}
		if err != nil {
			if !config.IsError(err) || !strings.Contains(err.Error(), file) {
				t.Fatalf("refusal %T does not name the file: %v", err, err)
			}
			return
		}
		c, err := ConfigFrom(v, "/h")
		if err != nil {
			return // a range the file's form allows (ports.start above ports.end)
		}
		if c.MountGrace < 0 || c.PortStart < 1 || c.PortEnd > 65535 || c.ReapInterval <= 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}
