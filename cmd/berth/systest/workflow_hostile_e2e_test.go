package systest

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wfGatedWorkflow is the files of a workflow typ whose phase 1 is gated by gate.
func wfGatedWorkflow(typ, gate string) map[string]string {
	dir := ".praxis-os/workflows/" + typ + "/"
	return map[string]string{
		dir + "metadata.json":                 `{"workflow_type": "` + typ + `", "total_phases": 2, "phases": [{"phase_number": 1, "phase_name": "Gated"}, {"phase_number": 2, "phase_name": "After"}]}`,
		dir + "phases/1/phase.md":             "# Phase 1\n",
		dir + "phases/1/gate-definition.yaml": gate,
		dir + "phases/2/phase.md":             "# Phase 2\n",
	}
}

// TestHostileGatesThroughBerthServe sends a repository's hostile gates to a
// real `berth serve`, run under a 4 GiB address-space limit so that a
// regression fails the test and not the machine: a validator building a
// list of 500 million items (30.6 s and +7.6 GB of the broker before) and a
// costly pattern over 500 KB of evidence (30 s a call) each fail their
// check with the limit and the fix, cost the broker within four times a
// request's budget, and leave the session on its phase; while a rule
// computes until its child's CPU limit stops it, another project's MCP
// initialize answers within a second each time.
func TestHostileGatesThroughBerthServe(t *testing.T) {
	// Serial: it measures the broker's cost against a budget and another project's answer within a second, which other tests beside it would skew.
	if runtime.GOOS != "linux" {
		t.Skip("the broker's cost is read from /proc")
	}
	prlimit := needTool(t, "prlimit", "util-linux")
	wrap := []string{prlimit, "--as=4294967296", "--"}
	raceBuilt := os.Getenv("BERTH_TEST_RACE") != ""
	if raceBuilt {
		// The race detector maps shadow memory past any such limit: a
		// race-built broker and its gate children run without it, their
		// memory held by the children's watchdog alone.
		wrap = nil
	}
	b := brokertest.StartBroker(t, brokertest.Options{Wrap: wrap})
	files := map[string]string{".praxis-os/config.yaml": "mcp:\n  enabled_tool_groups: [workflow]\n"}
	for typ, gate := range map[string]string{
		"huge_v1":    "checkpoint: {strict: true}\nevidence_schema:\n  n: {type: integer, required: true, validator: huge}\nvalidators:\n  huge: \"lambda x: len([0] * 500000000) > 0\"\n",
		"pattern_v1": "checkpoint: {strict: true}\nevidence_schema:\n  s: {type: string, required: true, pattern: \"" + strings.Repeat(".{100}", 5) + "z\"}\n",
		"slow_v1":    "checkpoint: {strict: true}\ncross_field_validation:\n  - rule: \"lambda e: sum(range(1000000000)) > 0\"\n    error_message: a rule that never ends\n",
	} {
		for name, body := range wfGatedWorkflow(typ, gate) {
			files[name] = body
		}
	}
	root := brokertest.Project(t, "hostile-gates", files)
	cs := wfConnect(t, b, root)
	c := &workflowtest.Client{TB: t, CS: cs}

	cases := []struct{ typ, want string }{
		{"huge_v1", `validator "huge" failed for field "n": stopped: it used more than 256 MiB of memory`},
		{"pattern_v1", "so at most 7952 bytes are matched: shorten the text or simplify the pattern"},
	}
	evidence := map[string]map[string]any{"huge_v1": {"n": 1}, "pattern_v1": {"s": strings.Repeat("a", 500_000)}}
	for _, tc := range cases {
		sid := c.Must("start_workflow", map[string]any{"workflow_type": tc.typ, "target_file": "x"})["session_id"].(string)
		cpu0, rss := wfCPU(t, b.PID()), wfResetPeak(t, b.PID())
		out := c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 1, "evidence": evidence[tc.typ]})
		cpu, peak := wfCPU(t, b.PID())-cpu0, wfProcField(t, b.PID(), "VmHWM")-rss
		t.Logf("%s: the broker spent %v of CPU, its peak rose %d MiB", tc.typ, cpu, peak>>20)
		want := tc.want
		if raceBuilt && tc.typ == "huge_v1" {
			// Under the detector another bound may stop it first: its CPU
			// or its wall time.
			want = `validator "huge" failed for field "n": stopped: it `
		}
		if out["checkpoint_passed"] != false || !strings.Contains(strings.Join(wfStrings(out["errors"]), "\n"), want) {
			t.Fatalf("%s: complete_phase answered %v; want a failed check saying %q", tc.typ, out, want)
		}
		if cpu > 4*workflowtest.Request.CPU || peak > 4*workflowtest.Request.Memory {
			t.Errorf("%s: complete_phase cost the broker %v of CPU and %d MiB; the budget is %v and %d MiB (4x allowed)",
				tc.typ, cpu, peak>>20, workflowtest.Request.CPU, workflowtest.Request.Memory>>20)
		}
		if st := c.Must("get_workflow_state", map[string]any{"session_id": sid}); st["current_phase"] != float64(1) {
			t.Errorf("%s: after the failed check the session is at phase %v, want 1", tc.typ, st["current_phase"])
		}
	}

	// Another project initializes while the slow rule is checked.
	other := brokertest.Project(t, "bystander", nil)
	otherURL := b.Attach(t, other).URL
	sid := c.Must("start_workflow", map[string]any{"workflow_type": "slow_v1", "target_file": "x"})["session_id"].(string)
	done := make(chan map[string]any, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out := map[string]any{}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "complete_phase", Arguments: map[string]any{"session_id": sid, "phase": 1, "evidence": map[string]any{}}})
		if err != nil {
			out["error"] = err.Error()
		} else if raw, err := json.Marshal(res.StructuredContent); err == nil {
			json.Unmarshal(raw, &out)
		}
		done <- out
	}()
	var slow map[string]any
	for i := 0; slow == nil && i < 50; i++ {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bystander", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: otherURL}, nil)
		took := time.Since(t0)
		cancel()
		if err != nil {
			t.Fatalf("initialize of another project during the slow gate: %v", err)
		}
		cs.Close()
		if took > time.Second {
			t.Errorf("initialize of another project took %v during the slow gate; want under 1s", took)
		}
		select {
		case slow = <-done:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if slow == nil {
		slow = <-done
	}
	errs := strings.Join(wfStrings(slow["errors"]), "\n")
	if slow["checkpoint_passed"] != false || !strings.Contains(errs, "a rule that never ends") ||
		!strings.Contains(errs, "of CPU time") && !strings.Contains(errs, "stopped: it ran longer than") {
		t.Fatalf("complete_phase with a rule stopped by a limit answered %v", slow)
	}
}

// wfConnect attaches root and opens an MCP session on its port.
func wfConnect(t *testing.T, b *brokertest.Broker, root string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func wfStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// wfCPU is the user and system time of process pid (clock ticks of 10 ms).
func wfCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// wfResetPeak resets pid's peak resident size (VmHWM) and returns its resident size.
func wfResetPeak(t *testing.T, pid int) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	return wfProcField(t, pid, "VmRSS")
}

// wfProcField reads a size field (kB) of /proc/PID/status, in bytes.
func wfProcField(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
