package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
)

// TestServersRestartReturnsServing: `berth servers restart DIR NAME` of
// the real server-memory returns once the new process serves, so that
// `berth call` right after reaches it (and its graph); a restart of a
// server that fails again exits non-zero with the reason.
func TestServersRestartReturnsServing(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := memoryBroker(t, "  crash:\n    command: sh\n    args: [-c, 'echo boom >&2; exit 1']\n    start: eager\n")
	home := b.Home
	root := brokertest.Project(t, "restart", nil)
	if out, code := berthCmd(t, home, "attach", root); code != 0 {
		t.Fatalf("attach: %s", out)
	}
	entity := `{"entities": [{"name": "berth", "entityType": "tool", "observations": ["kept across a restart"]}]}`
	if out, code := berthCmd(t, home, "call", "--project", root, "memory__create_entities", entity); code != 0 {
		t.Fatalf("create_entities (exit %d):\n%s", code, out)
	}
	status := func(name string) api.ServerStatus { return serverStatus(t, ctx, b, root, name) }
	old := status("memory").PID

	out, code := berthCmd(t, home, "servers", "restart", root, "memory")
	if code != 0 || !strings.Contains(out, "restarted memory of "+root+": serving again") {
		t.Fatalf("berth servers restart (exit %d):\n%s", code, out)
	}
	out, code = berthCmd(t, home, "call", "--project", root, "memory__read_graph")
	if code != 0 || !strings.Contains(out, "kept across a restart") {
		t.Errorf("berth call right after the restart (exit %d):\n%s", code, out)
	}
	if st := status("memory"); st.State != api.ServerRunning || st.PID == old || st.PID == 0 {
		t.Errorf("after the restart: %+v (the old pid was %d)", st, old)
	}

	brokertest.Eventually(t, "the crashing server failed", func() bool { return status("crash").State == api.ServerFailed })
	out, code = berthCmd(t, home, "servers", "restart", root, "crash")
	if code == 0 || !strings.Contains(out, `hosted server "crash" failed to start again`) || !strings.Contains(out, "boom") {
		t.Errorf("berth servers restart of a server that fails again (exit %d):\n%s", code, out)
	}
}

// memoryBroker starts a broker whose config declares the real
// server-memory as memory (its graph in a file of the test's), then extra:
// more of memory's keys, or more servers.
func memoryBroker(t *testing.T, extra string) *brokertest.Broker {
	t.Helper()
	node, script := brokertest.NPMServer(t, "server-memory")
	home := brokertest.Home(t)
	cfg := fmt.Sprintf("servers:\n  memory:\n    command: %q\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n%s",
		node, script, filepath.Join(t.TempDir(), "graph.jsonl"), extra)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return brokertest.StartBroker(t, brokertest.Options{Home: home})
}
