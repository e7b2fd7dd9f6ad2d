package mounttable

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/store/storetest"
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

// BenchmarkSiblingAttach times a sibling worktree's mount to its index's
// first catch-up, with its main checkout mounted and indexed: what each
// worktree after the first costs berth-bench worktrees. The sibling is
// unmounted after each, untimed.
func BenchmarkSiblingAttach(b *testing.B) {
	ctx := context.Background()
	main, wts := siblingRepo(b, 1)
	table := siblingTable(b, ctx)
	first := mountIndexed(b, ctx, table, main)
	defer table.unmount(ctx, first, "done")
	b.ResetTimer()
	for b.Loop() {
		m := mountIndexed(b, ctx, table, wts[0])
		b.StopTimer()
		table.unmount(ctx, m, "done")
		b.StartTimer()
	}
}

// BenchmarkSiblingMemory mounts 7 siblings after the main checkout, as
// berth-bench worktrees does, and reports the live heap each added (after
// a collection), with -memprofile showing what holds it.
func BenchmarkSiblingMemory(b *testing.B) {
	ctx := context.Background()
	main, wts := siblingRepo(b, 7)
	for b.Loop() {
		table := siblingTable(b, ctx)
		first := mountIndexed(b, ctx, table, main)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		heap := os.Getenv("BERTH_SIBLING_HEAP")
		if heap != "" {
			writeHeap(b, heap+".before")
		}
		var ms []*Mount
		for _, wt := range wts {
			ms = append(ms, mountIndexed(b, ctx, table, wt))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if heap != "" {
			writeHeap(b, heap)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(wts))/1024, "KiB/sibling")
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
