package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// connectMCP opens a go-sdk client session over transport.
func connectMCP(t *testing.T, ctx context.Context, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "berth-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// autostartHome is a BERTH_HOME for tests whose shims start the broker.
// When the test ends (after every session it opened has closed), a broker
// still running on it is an error, and it is killed.
func autostartHome(t *testing.T) string {
	t.Helper()
	home := brokertest.Home(t)
	failOnBrokersLeft(t, home)
	return home
}

// failOnBrokersLeft makes a broker still running on home when the test ends
// an error, and kills it.
func failOnBrokersLeft(t *testing.T, home string) {
	t.Cleanup(func() {
		var left []int32
		if brokertest.Poll(5*time.Second, func() bool { // a killed broker may take a moment to leave the table
			left = brokertest.BrokerProcesses(t, home)
			return len(left) == 0
		}) {
			return
		}
		for _, pid := range left {
			t.Errorf("broker pid %d left running on %s", pid, home)
			brokertest.KillPID(int(pid))
		}
	})
}

// killAtEnd kills the process *pid names when the test ends. Call it before
// opening the sessions that reach it: cleanups run last-in first-out, so the
// shims exit first and none of them starts a broker again.
func killAtEnd(t *testing.T, pid *int) { t.Cleanup(func() { brokertest.KillPID(*pid) }) }

// shimTransport runs berth-shim for root on home, as an IDE would.
func shimTransport(t *testing.T, home, root string, extraEnv ...string) (*mcp.CommandTransport, *exec.Cmd) {
	t.Helper()
	return shimTransportBin(t, brokertest.Shim(t), home, root, extraEnv...)
}

// shimTransportBin is shimTransport with a given berth-shim binary.
func shimTransportBin(t *testing.T, shim, home, root string, extraEnv ...string) (*mcp.CommandTransport, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(shim, "--project", root, "--log-level", "debug")
	cmd.Env = append(append(os.Environ(), "BERTH_HOME="+home, "BERTH_LISTEN=", "BERTH_MOUNT_GRACE=300ms"), extraEnv...)
	cmd.Stderr = newLogWriter(t, "shim")
	brokertest.DieWithTest(cmd)
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd
}

type serverInfo struct {
	Server struct {
		Transport string `json:"transport"`
		PID       int    `json:"pid"`
	} `json:"server"`
	Project struct {
		Name string          `json:"name"`
		Root string          `json:"root"`
		Git  json.RawMessage `json:"git"`
	} `json:"project"`
	Capabilities struct {
		ToolsAvailable int      `json:"tools_available"`
		Tools          []string `json:"tools"`
		Transports     []string `json:"transports"`
	} `json:"capabilities"`
}

func getServerInfo(t *testing.T, ctx context.Context, s *mcp.ClientSession) serverInfo {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call get_server_info: %v", err)
	}
	if res.IsError {
		t.Fatalf("get_server_info failed: %+v", res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var info serverInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// logWriter sends a child's stderr to the test log.
type logWriter struct {
	t      *testing.T
	prefix string
}

func newLogWriter(t *testing.T, prefix string) *logWriter { return &logWriter{t: t, prefix: prefix} }

func (w *logWriter) Write(p []byte) (int, error) {
	defer func() { _ = recover() }() // the test may have ended
	w.t.Logf("%s: %s", w.prefix, p)
	if bytes.Contains(p, []byte("WARNING: DATA RACE")) {
		w.t.Errorf("%s reported a data race", w.prefix)
	}
	return len(p), nil
}

func hasTool(tools []*mcp.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// dig walks nested JSON objects by keys; nil when a step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

// heavySlot is held by the one CPU-heavy parallel test running (a flood of
// requests, hundreds of client processes): two at once would leave the
// light tests beside them too little of a small machine to keep their
// deadlines.
var heavySlot = make(chan struct{}, 1)

// heavy marks a parallel test as CPU-heavy: called after t.Parallel, it
// waits until no other heavy test runs, and holds the slot until the test
// ends.
func heavy(t *testing.T) {
	t.Helper()
	heavySlot <- struct{}{}
	t.Cleanup(func() { <-heavySlot })
}

// defaultPorts is held by the test running Berth on its default ports
// (control 127.0.0.1:4241, projects from 4242), as a user who sets nothing
// does: one broker at a time can listen there.
var defaultPorts sync.Mutex

// onDefaultPorts marks a parallel test that runs Berth on its default
// ports: called after t.Parallel, it waits until no other such test runs,
// and holds the ports until the test ends. The other tests choose free
// ports (brokertest.PortRange) and run beside it.
func onDefaultPorts(t *testing.T) {
	t.Helper()
	defaultPorts.Lock()
	t.Cleanup(defaultPorts.Unlock)
}
