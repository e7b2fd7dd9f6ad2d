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
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stillMountedLine is the broker's debug line when a project's grace ends
// while a session is in use (broker/mounttable/table.go, expire).
const stillMountedLine = "a session is in use: the project stays mounted"

// TestBusySubAgentKeepsItsProject: with a 1s mount_grace, a sub-agent on
// the project's HTTP endpoint keeps the project after the last IDE window
// closed, for as long as it calls (its last request is recent) and while a
// call of it is in flight, however many graces pass; the state file stays
// and names the same port. Once its session ends, the project goes after
// the grace, state file included.
func TestBusySubAgentKeepsItsProject(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	hold := t.TempDir()
	// The agent's last call, just before the window closes, holds the
	// project for one grace: long enough for the test to see the window's
	// holder gone, which race-built processes take several times longer to
	// tell.
	grace := "1s"
	if os.Getenv("BERTH_TEST_RACE") != "" {
		grace = "5s"
	}
	b := brokertest.StartBroker(t, brokertest.Options{MountGrace: grace, Env: []string{brokertest.HoldEnv + "=" + hold}})
	root := brokertest.Project(t, "busy", nil)
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	callOK(t, ctx, ide, "get_server_info", nil)
	sf, err := api.ReadStateFile(root)
	if err != nil || sf.URL == nil || sf.Port == nil {
		t.Fatalf("state file: %+v %v", sf, err)
	}
	port := *sf.Port
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL, DisableStandaloneSSE: true})
	callOK(t, ctx, agent, "get_server_info", nil)

	ide.Close()
	var ps []api.Project
	if !brokertest.Poll(brokertest.WaitLimit, func() bool {
		ps, err = b.Client.Projects(ctx)
		return err == nil && len(ps) == 1 && ps[0].Holders == 0
	}) {
		t.Fatalf("never within %s: the IDE window's shim let go of the project: %+v %v", brokertest.WaitLimit, ps, err)
	}
	logged := func() int {
		raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
		return strings.Count(string(raw), stillMountedLine)
	}
	stillServed := func(phase string) {
		t.Helper()
		sf, err := api.ReadStateFile(root)
		if err != nil || sf.Port == nil || *sf.Port != port {
			t.Fatalf("%s: the state file is %+v (%v); want it to name port %d", phase, sf, err, port)
		}
	}

	// Calling: each call ends a moment before the next starts, so the
	// session is mostly idle, and its last request is always recent.
	calls := 0
	for start := logged(); logged() < start+2; calls++ {
		if calls == 10000 || ctx.Err() != nil {
			t.Fatalf("after %d calls the grace never ended twice while the agent called", calls)
		}
		callOK(t, ctx, agent, "get_server_info", nil)
		stillServed("while the agent calls")
	}
	t.Logf("%d calls over two graces", calls)

	// Waiting on one long call: two graces pass with it in flight, the
	// second one with nothing but the call to hold the project.
	done := make(chan error, 1)
	go func() {
		res, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: "berth_test_hold", Arguments: map[string]any{"name": "go"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", brokertest.ResultText(res))
		}
		done <- err
	}()
	start := logged()
	brokertest.Eventually(t, "two graces end while the call is in flight", func() bool { return logged() >= start+2 })
	stillServed("while a call is in flight")
	if err := os.WriteFile(filepath.Join(hold, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the long call: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the long call never returned")
	}
	callOK(t, ctx, agent, "get_server_info", nil)

	// Quiet: the session ends, and the project goes after its grace.
	agent.Close()
	brokertest.Eventually(t, "the project unmounted once the agent went quiet", func() bool {
		ps, err := b.Client.Projects(ctx)
		return err == nil && len(ps) == 0
	})
	// The project leaves the table before its mount closes and removes the
	// state file: wait for that removal, not only for the empty list.
	brokertest.Eventually(t, "the state file removed with the unmount", func() bool {
		_, err := os.Stat(api.StatePath(root))
		return os.IsNotExist(err)
	})
}
