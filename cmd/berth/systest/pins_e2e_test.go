package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A project pinned with `berth attach`, a shim attached, kill -9 of the
// broker: the shim's attach to the next broker and that broker's remount
// of the pin run within moments of each other. The pin must survive both
// orders, and a clean stop and start after.
func TestPinSurvivesKillWhileAShimIsAttached(t *testing.T) {
	// Serial: its shim must reach the next broker within 10 s, too tight beside other brokers starting.
	// Its two orders, each on its own home and ports, run beside each other.
	for _, order := range []struct {
		name string
		// shimStarts: the shim's reconnect starts the next broker and
		// attaches as soon as it answers (before or while it remounts the
		// pin). Else the shim cannot start one (no berth beside it or on
		// its PATH: it keeps retrying) and the test starts it: its remount
		// runs as it becomes ready, the shim's attach at its next retry.
		shimStarts bool
	}{{"shim attach first", true}, {"remount first", false}} {
		t.Run(order.name, func(t *testing.T) {
			t.Parallel()
			for round := range 3 {
				pinSurvivesRound(t, order.shimStarts, round)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func pinSurvivesRound(t *testing.T, shimStarts bool, round int) {
	home := autostartHome(t)
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, fmt.Sprintf("pin%d", round), nil)
	id := api.ProjectID(root)
	start, end := brokertest.PortRange(t, 6)
	env := []string{"BERTH_IDLE_TIMEOUT=60s", fmt.Sprintf("BERTH_PORTS_START=%d", start), fmt.Sprintf("BERTH_PORTS_END=%d", end)}
	var pids []int
	t.Cleanup(func() {
		for _, pid := range pids {
			brokertest.KillPID(pid)
		}
	})

	if out, err := berthEnv(t, home, env, "attach", root); err != nil {
		t.Fatalf("berth attach: %v\n%s", err, out)
	}
	shimBin := brokertest.Shim(t)
	shimEnv := env
	if !shimStarts {
		shimBin = lonelyShim(t)
		shimEnv = append(shimEnv, "PATH=/nonexistent")
	}
	tr, _ := shimTransportBin(t, shimBin, home, root, shimEnv...)
	s := connectMCP(t, ctx, tr)
	first := getServerInfo(t, ctx, s).Server.PID
	pids = append(pids, first)

	brokertest.KillPID(first)
	// Gone from the process table: a killed Go process shows as a zombie
	// while its other threads still hold its files (the home's lock).
	if !brokertest.Poll(10*time.Second, func() bool { return brokertest.Reaped(first) }) {
		t.Fatalf("broker %d survived kill -9", first)
	}
	var b *brokertest.Broker
	if !shimStarts {
		b = brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--ports-start", fmt.Sprint(start), "--ports-end", fmt.Sprint(end)}})
	}
	var second int
	brokertest.Eventually(t, "the shim serves again from the next broker", func() bool {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			return false
		}
		second = int(dig(res.StructuredContent, "server", "pid").(float64))
		return second != first
	})
	pids = append(pids, second)
	c := api.NewUnixClient(api.SocketPath(home))
	brokertest.Eventually(t, "the project is pinned on the next broker", func() bool {
		p, err := c.Project(ctx, id)
		return err == nil && p.Pinned
	})

	// The IDE closes; the broker stops cleanly and starts again: the pin
	// is remounted from the registry.
	s.Close()
	if b != nil {
		if err := b.Stop(t); err != nil {
			t.Fatal(err)
		}
	} else {
		if out, err := berthEnv(t, home, env, "stop"); err != nil {
			t.Fatalf("berth stop: %v\n%s", err, out)
		}
		if !brokertest.WaitGone(second, 10*time.Second) {
			t.Fatalf("broker %d still runs after berth stop", second)
		}
	}
	b3 := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--ports-start", fmt.Sprint(start), "--ports-end", fmt.Sprint(end)}})
	brokertest.Eventually(t, "the pin is remounted after a clean restart", func() bool {
		p, err := b3.Client.Project(ctx, id)
		return err == nil && p.Pinned
	})
	if err := b3.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// berthEnv runs the berth CLI on home with env added; it returns its output.
func berthEnv(t *testing.T, home string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(brokertest.Berth(t), args...)
	cmd.Env = append(append(os.Environ(), "BERTH_HOME="+home, "BERTH_LISTEN="), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lonelyShim is a copy of berth-shim in a folder without berth: it cannot
// start a broker.
func lonelyShim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "berth-shim")
	if err := brokertest.LinkExecutable(brokertest.Shim(t), p); err != nil {
		t.Fatal(err)
	}
	return p
}
