package search

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// BenchmarkShared measures a worktree's view of a shared index against a
// full build of the same files with an index of its own: "own" builds
// 2,000 files, "twin" opens a view equal to a sibling's, "switch" applies
// a change of every file to content no sibling holds, and "switch-back"
// one to content a sibling holds.
func BenchmarkShared(b *testing.B) {
	const n = 2000
	base := b.TempDir()
	main, other := filepath.Join(base, "main"), filepath.Join(base, "other")
	writeFiles(b, main, worktreeFiles(n, "main"))
	writeFiles(b, other, worktreeFiles(n, "main"))
	db := openDB(b)
	b.Run("own", func(b *testing.B) {
		for i := range b.N {
			ix := openWith(b, Options{Root: main, Sources: defaultSources, DB: db, ProjectID: fmt.Sprintf("own%d", i)})
			ix.Close()
		}
	})
	sh := NewShared(nil)
	openView(b, db, sh, "main", main)
	b.Run("twin", func(b *testing.B) {
		for i := range b.N {
			v := openView(b, db, sh, fmt.Sprintf("twin%d", i), other)
			v.Close()
		}
	})
	v := openView(b, db, sh, "other", other)
	paths := make([]string, 0, n+1)
	for rel := range worktreeFiles(n, "main") {
		paths = append(paths, rel)
	}
	b.Run("switch", func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			writeFiles(b, other, worktreeFiles(n, fmt.Sprintf("branch%d", i)))
			b.StartTimer()
			if err := v.Apply(context.Background(), paths); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			writeFiles(b, other, worktreeFiles(n, "main"))
			b.StartTimer()
			if err := v.Apply(context.Background(), paths); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// editFiles are n files of 3 to 7 sections each, as a repository's
// standards are.
func editFiles(n int, seed uint64) map[string]string {
	g := newCorpusGen(seed)
	files := make(map[string]string, n)
	for i := range n {
		files[fmt.Sprintf(".praxis-os/standards/area%02d/std%04d.md", i%20, i)] = g.file()
	}
	return files
}

// BenchmarkSharedEdit measures a branch switch in a git worktree of 2,000
// files whose sibling holds the files as they are, to a branch that edits
// each file's last section (the others as the sibling holds them), and
// back, against a full build of the same files ("own"). "edit" applies
// the change as one batch of the watcher's; "edit-staged" as a checkout
// is applied: the files staged in batches of the watcher's while git
// holds its lock, then the walk after git let go and the change taken
// with git's new index. "new-staged" is a checkout so applied of a branch
// where every file is new. Each op is the switch and the switch back;
// git's checkout is not timed.
func BenchmarkSharedEdit(b *testing.B) {
	const n = 2000
	files := editFiles(n, 29)
	repo, repoGit, wt, wtGit := gitWorktrees(b, files)
	paths := slices.Sorted(maps.Keys(files))
	for branch, content := range map[string]map[string]string{"edit": files, "new": editFiles(n, 31)} {
		brokertest.Git(b, wt, "checkout", "-q", "-b", branch, "wt")
		writeFiles(b, wt, content)
		for _, rel := range paths {
			f, err := os.OpenFile(filepath.Join(wt, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.WriteString("\nswitchmarker edited\n"); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		brokertest.Git(b, wt, "commit", "-q", "-am", branch)
	}
	brokertest.Git(b, wt, "checkout", "-q", "wt")

	db := openDB(b)
	b.Run("own", func(b *testing.B) {
		defer reportCPU(b)()
		for i := range b.N {
			ix := openWith(b, Options{Root: repo, Sources: defaultSources, DB: db, ProjectID: fmt.Sprintf("own%d", i)})
			ix.Close()
		}
	})
	sh := NewShared(nil)
	openWith(b, Options{Root: repo, Sources: defaultSources, DB: db, ProjectID: "main", Shared: sh, GitDir: repoGit})
	v := openWith(b, Options{Root: wt, Sources: defaultSources, DB: db, ProjectID: "wt", Shared: sh, GitDir: wtGit})
	checkout := func(b *testing.B, branch string) {
		b.StopTimer()
		brokertest.Git(b, wt, "checkout", "-q", branch)
		// Dated ahead, as git dates an index it writes a second later: no
		// file is racily clean.
		later := time.Now().Add(time.Second)
		if err := os.Chtimes(filepath.Join(wtGit, "index"), later, later); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	want := func(b *testing.B, branch string, total int) {
		b.StopTimer()
		if got := search(b, v, "switchmarker").Total; got != total {
			b.Fatalf("after the switch to %s: %d sections hold the marker, want %d", branch, got, total)
		}
		b.StartTimer()
	}
	// Each op switches to branch and back, applying each switch
	// with apply, which returns how long its part after git's checkout
	// took (reported as after-git-ms/op).
	bench := func(name, branch string, apply func(b *testing.B) time.Duration) {
		b.Run(name, func(b *testing.B) {
			defer reportCPU(b)()
			var after time.Duration
			for range b.N {
				for _, step := range []struct {
					branch string
					total  int
				}{{branch, n}, {"wt", 0}} {
					checkout(b, step.branch)
					after += apply(b)
					want(b, step.branch, step.total)
				}
			}
			b.ReportMetric(float64(after.Microseconds())/1e3/float64(b.N), "after-git-ms/op")
		})
	}
	bench("edit", "edit", func(b *testing.B) time.Duration {
		start := time.Now()
		if err := v.Apply(context.Background(), paths); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	})
	staged := func(b *testing.B) time.Duration {
		st := &staged{}
		for i := 0; i < len(paths); i += batchFiles {
			v.stage(st, paths[i:min(i+batchFiles, len(paths))])
		}
		start := time.Now()
		v.writeMu.Lock()
		disk, err := v.scan(context.Background())
		v.writeMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if err := v.apply(context.Background(), paths, disk, st); err != nil {
			b.Fatal(err)
		}
		after := time.Since(start)
		v.unstage(st)
		return after
	}
	bench("edit-staged", "edit", staged)
	bench("new-staged", "new", staged)
}

// reportCPU, deferred as defer reportCPU(b)(), reports the process's CPU
// time per op (its background work included; git's, a child's, not).
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		b.ReportMetric(float64((cpuTime(b)-start).Milliseconds())/float64(b.N), "cpu-ms/op")
	}
}
