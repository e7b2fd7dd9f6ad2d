package mounttable

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// siblingFiles is the size of the repository the sibling benchmarks
// attach worktrees of, as berth-bench worktrees does.
const siblingFiles = 2000

// siblingRepo makes a git repository of siblingFiles standards files and
// n linked worktrees of it; it returns the main checkout and the
// worktrees' roots.
func siblingRepo(tb testing.TB, n int) (string, []string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("no git")
	}
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	main := filepath.Join(dir, "main")
	for i := range siblingFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "# Standard %d\n\nEvery standard %d says what it wants.\n\n", i, i)
		for s := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\nWords of part %d of standard %d, with a few more words after them.\n\n", s, s, i)
		}
		p := filepath.Join(main, api.ProjectDir, "standards", fmt.Sprintf("area-%02d", i%20), fmt.Sprintf("std-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	runGit(tb, main, "init", "-q", "-b", "main")
	runGit(tb, main, "add", "-A")
	runGit(tb, main, "commit", "-q", "-m", "first")
	var roots []string
	for i := range n {
		wt := filepath.Join(dir, fmt.Sprintf("wt-%d", i))
		runGit(tb, main, "worktree", "add", "-q", "-b", fmt.Sprintf("wt-%d", i), wt)
		roots = append(roots, wt)
	}
	return main, roots
}

func runGit(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// siblingTable is a table whose worktrees share one content index per
// repository, as the broker's do.
func siblingTable(tb testing.TB, ctx context.Context) *Table {
	tb.Helper()
	db := storetest.Open(tb, "")
	hub := watch.NewHub()
	var mu sync.Mutex
	shared := map[string]*search.Shared{}
	table := New(Deps{Ctx: ctx, DB: db, Log: slog.New(slog.DiscardHandler), Watch: hub,
		SharedIndex: func(id gitrepo.Identity, _ bool, log *slog.Logger) *search.Shared {
			if !id.Member() {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			if shared[id.ID] == nil {
				shared[id.ID] = search.NewShared(log)
			}
			return shared[id.ID]
		}})
	tb.Cleanup(func() {
		table.CloseAll(context.Background())
		hub.Close()
	})
	return table
}

// mountIndexed mounts root and waits for its index's first catch-up, after
// which a search answers.
func mountIndexed(tb testing.TB, ctx context.Context, table *Table, root string) *Mount {
	tb.Helper()
	m, err := table.open(root, api.ProjectID(root), false)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.engine.WaitIndexReady(ctx); err != nil {
		tb.Fatal(err)
	}
	return m
}

// siblingSetup makes a repository with one linked worktree and a table
// with its main checkout mounted and indexed; it returns the table and
// the worktree's root.
func siblingSetup(b *testing.B) (*Table, string) {
	ctx := context.Background()
	main, wts := siblingRepo(b, 1)
	table := siblingTable(b, ctx)
	first := mountIndexed(b, ctx, table, main)
	b.Cleanup(func() { table.unmount(ctx, first, "done") })
	return table, wts[0]
}

// BenchmarkSiblingAttach times a sibling worktree's mount to its index's
// first catch-up, with its main checkout mounted and indexed: what each
// worktree after the first costs berth-bench worktrees. The sibling is
// unmounted after each, untimed.
func BenchmarkSiblingAttach(b *testing.B) {
	ctx := context.Background()
	table, sibling := siblingSetup(b)
	var cpu cpuMeter
	var opening time.Duration // the mount's open, before its index catches up
	for b.Loop() {
		cpu.start()
		start := time.Now()
		m, err := table.open(sibling, api.ProjectID(sibling), false)
		if err != nil {
			b.Fatal(err)
		}
		opening += time.Since(start)
		if err := m.engine.WaitIndexReady(ctx); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
		b.StopTimer()
		table.unmount(ctx, m, "done")
		b.StartTimer()
	}
	cpu.report(b)
	b.ReportMetric(float64(opening.Microseconds())/1000/float64(b.N), "open-ms/op")
}

// cpuMeter adds up the process's CPU time (user and system) over the
// timed parts of a benchmark: a figure the machine's other load moves
// less than the wall time.
type cpuMeter struct {
	at, total time.Duration
	n         int
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *cpuMeter) start() { c.at = processCPU() }
func (c *cpuMeter) stop()  { c.total += processCPU() - c.at; c.n++ }
func (c *cpuMeter) report(b *testing.B) {
	if c.n > 0 {
		b.ReportMetric(float64(c.total.Microseconds())/1000/float64(c.n), "cpu-ms/op")
	}
}

// BenchmarkSiblingMemory mounts 7 siblings after the main checkout, as
// berth-bench worktrees does, and reports what each added once collected
// and returned to the system: live heap, resident memory, goroutines.
// With BERTH_SIBLING_SESSIONS set, each sibling is searched in an MCP
// session of its port, kept open, as berth-bench does; with
// BERTH_SIBLING_HEAP=FILE, heap profiles before (FILE.before) and after
// the siblings, and the goroutines after (FILE.goroutines), are written:
// `go tool pprof -sample_index=inuse_space -base FILE.before FILE` is
// what the siblings hold (with -memprofilerate 512 for detail).
func BenchmarkSiblingMemory(b *testing.B) {
	ctx := context.Background()
	main, wts := siblingRepo(b, 7)
	for b.Loop() {
		table := siblingTable(b, ctx)
		first := mountIndexed(b, ctx, table, main)
		var before, after runtime.MemStats
		debug.FreeOSMemory()
		runtime.ReadMemStats(&before)
		rss0, g0 := residentKiB(b), runtime.NumGoroutine()
		heap := os.Getenv("BERTH_SIBLING_HEAP")
		if heap != "" {
			writeHeap(b, heap+".before")
		}
		var ms []*Mount
		var sessions []*mcp.ClientSession
		for _, wt := range wts {
			m := mountIndexed(b, ctx, table, wt)
			ms = append(ms, m)
			if os.Getenv("BERTH_SIBLING_SESSIONS") != "" {
				sessions = append(sessions, searchOnce(b, ctx, m))
			}
		}
		debug.FreeOSMemory()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(residentKiB(b)-rss0)/float64(len(wts)), "rss-KiB/sibling")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(len(wts)), "goroutines/sibling")
		if heap != "" {
			writeHeap(b, heap)
			f, err := os.Create(heap + ".goroutines")
			if err != nil {
				b.Fatal(err)
			}
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(wts))/1024, "KiB/sibling")
		for _, cs := range sessions {
			cs.Close()
		}
		for _, m := range append(ms, first) {
			table.unmount(ctx, m, "done")
		}
	}
}

// writeHeap writes a heap profile (live objects) to path.
func writeHeap(tb testing.TB, path string) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkSiblingAttachWhole is BenchmarkSiblingAttach through the
// table's attach (the registry's record, the state file, the answer), as
// a new worktree's first attach: its record is forgotten after each.
func BenchmarkSiblingAttachWhole(b *testing.B) {
	ctx := context.Background()
	table, sibling := siblingSetup(b)
	var cpu cpuMeter
	for b.Loop() {
		cpu.start()
		resp, err := table.Attach(ctx, api.AttachRequest{Root: sibling, Kind: api.HolderCLI})
		if err != nil {
			b.Fatal(err)
		}
		table.mu.Lock()
		sl := table.slots[resp.Project.ID]
		table.mu.Unlock()
		if err := sl.m.engine.WaitIndexReady(ctx); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
		b.StopTimer()
		table.mu.Lock()
		out := table.takeOutLocked(resp.Project.ID, sl)
		table.mu.Unlock()
		table.unmountTaken(ctx, "done", out)
		if err := table.db.ForgetProject(resp.Project.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	cpu.report(b)
}

// residentKiB is the process's resident memory, from /proc/self/statm.
func residentKiB(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		tb.Skip("no /proc/self/statm")
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		tb.Fatal(err)
	}
	return resident * int64(os.Getpagesize()) / 1024
}

// searchOnce opens an MCP session on m's port and runs a search in it, as
// a client of the worktree does; the session stays open.
func searchOnce(tb testing.TB, ctx context.Context, m *Mount) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.url()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: search.ToolName, Arguments: map[string]any{"query": "standard"}})
	if err != nil || res.IsError {
		tb.Fatal(err, res)
	}
	return cs
}
