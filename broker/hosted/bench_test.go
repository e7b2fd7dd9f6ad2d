package hosted

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pair times a and b alternately b.N times each and reports both medians
// and their ratio, so both sides see the same machine load.
func pair(b *testing.B, nameA, nameB string, a, bb func()) (ma, mb time.Duration) {
	b.Helper()
	var ta, tb []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		a()
		t1 := time.Now()
		bb()
		ta, tb = append(ta, t1.Sub(t0)), append(tb, time.Since(t1))
	}
	b.StopTimer()
	ma, mb = median(ta), median(tb)
	b.ReportMetric(float64(ma.Microseconds())/1000, nameA+"-p50-ms")
	b.ReportMetric(float64(mb.Microseconds())/1000, nameB+"-p50-ms")
	b.ReportMetric(float64(mb)/float64(ma), nameB+"/"+nameA)
	return ma, mb
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCallHop: a small tool call (server-everything's echo) through
// Berth's forwarding (a client session on a server with the hosted surface
// installed) against the same call on a direct go-sdk stdio client to the
// same server. hop-ms is what Berth adds at the median; goal <= 0.5 ms.
func BenchmarkCallHop(b *testing.B) {
	ctx := testCtx(b, 10*time.Minute)
	d := everythingDecl(b)
	cs := direct(b, ctx, d)
	hp := openProject(b, newPool(b, Options{}), "bench", d)
	s := connect(b, hp, sessionOpts{})
	args := map[string]any{"message": "ping"}
	call := func(cs *mcp.ClientSession, name string) func() {
		return func() {
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || res.IsError {
				b.Fatalf("%s: %v %+v", name, err, res)
			}
		}
	}
	for range 20 { // warm both paths
		call(cs, "echo")()
		call(s.ClientSession, "everything__echo")()
	}
	md, mb := pair(b, "direct", "berth", call(cs, "echo"), call(s.ClientSession, "everything__echo"))
	b.ReportMetric(float64((mb-md).Microseconds())/1000, "hop-ms")
}

// BenchmarkFirstAnswer: a new window's first answer (connect, tools/list,
// memory__read_graph) when the server is already running in Berth, against
// starting server-memory for the window as IDEs do (start, initialize,
// tools/list, read_graph, stop). Goal: started/running >= 10.
func BenchmarkFirstAnswer(b *testing.B) {
	ctx := testCtx(b, 10*time.Minute)
	d := memoryDecl(b, "project", filepath.Join(b.TempDir(), "memory.jsonl"))
	hp := openProject(b, newPool(b, Options{}), "bench", d)
	hp.ensure(ctx, "", time.Minute)
	srv := serve(b, hp) // the project's one MCP server; each window is a new session on it
	running := func() {
		s := connectTo(b, srv, sessionOpts{})
		if _, err := s.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph"}); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	started := func() {
		cs := direct(b, ctx, d)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph"}); err != nil {
			b.Fatal(err)
		}
		cs.Close()
	}
	pair(b, "running", "started", running, started)
}

// BenchmarkSharedRSS: resident memory of server-memory for 4 windows and 2
// sub-agents: one process hosted for all six sessions against one process
// per session (as each IDE window and agent starts its own). Goal:
// shared/separate <= 0.25.
func BenchmarkSharedRSS(b *testing.B) {
	ctx := testCtx(b, 10*time.Minute)
	d := memoryDecl(b, "project", filepath.Join(b.TempDir(), "memory.jsonl"))
	var shared, separate uint64
	for range b.N {
		hp := openProject(b, newPool(b, Options{}), "bench", d)
		srv := serve(b, hp)
		for range 6 {
			s := connectTo(b, srv, sessionOpts{})
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph"}); err != nil {
				b.Fatal(err)
			}
		}
		shared = statusOf(b, hp, "memory").RSSBytes
		separate = 0
		for range 6 {
			cmd := exec.Command(d.Server.Command, d.Server.Args...)
			cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+d.Server.Env["MEMORY_FILE_PATH"])
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph"}); err != nil {
				b.Fatal(err)
			}
			separate += treeRSS(cmd.Process.Pid)
		}
	}
	b.ReportMetric(float64(shared)/(1<<20), "shared-MiB")
	b.ReportMetric(float64(separate)/(1<<20), "separate-MiB")
	b.ReportMetric(float64(shared)/float64(separate), "shared/separate")
}
