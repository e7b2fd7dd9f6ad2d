package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// failsafe bounds every wait; tests never assert on timing.
const failsafe = 10 * time.Second

func mkfile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newTestWatcher watches dirs of root until the test ends.
func newTestWatcher(t *testing.T, root string, dirs []string, opts ...Option) *Watcher {
	t.Helper()
	w, err := New(root, dirs, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// waitFor collects batches until every path in want has been seen, and
// returns everything seen.
func waitFor(t *testing.T, ch <-chan []string, want ...string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.After(failsafe)
	for {
		missing := false
		for _, p := range want {
			if !seen[p] {
				missing = true
			}
		}
		if !missing {
			return seen
		}
		select {
		case batch, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed; saw %v, want %v", seen, want)
			}
			if !slices.IsSorted(batch) {
				t.Errorf("batch not sorted: %v", batch)
			}
			for _, p := range batch {
				seen[p] = true
			}
		case <-deadline:
			t.Fatalf("timed out; saw %v, want %v", seen, want)
		}
	}
}

// quietFor writes a sentinel file and waits for it: every change made
// before it has been delivered by then. It fails if any path in never
// was reported.
func quietFor(t *testing.T, ch <-chan []string, root, sentinel string, never ...string) {
	t.Helper()
	mkfile(t, root, sentinel, "s")
	seen := waitFor(t, ch, sentinel)
	for _, p := range never {
		if seen[p] {
			t.Fatalf("%s was reported", p)
		}
	}
}

func TestCreateEditRenameDelete(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "std/a.md", "a")
	w := newTestWatcher(t, root, []string{"std"})
	ch := w.Subscribe()

	mkfile(t, root, "std/b.md", "b")
	waitFor(t, ch, "std/b.md")

	mkfile(t, root, "std/a.md", "a2")
	waitFor(t, ch, "std/a.md")

	if err := os.Rename(filepath.Join(root, "std/a.md"), filepath.Join(root, "std/c.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "std/a.md", "std/c.md")

	if err := os.Remove(filepath.Join(root, "std/b.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "std/b.md")
}

func TestNewFolderFilesReported(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "std"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := newTestWatcher(t, root, []string{"std"})
	ch := w.Subscribe()
	// Files written right after the folder appears, possibly before its
	// watch is in place, are still reported; so are later ones.
	mkfile(t, root, "std/new/deep/x.md", "x")
	waitFor(t, ch, "std/new/deep/x.md")
	mkfile(t, root, "std/new/deep/y.md", "y")
	waitFor(t, ch, "std/new/deep/y.md")
}

func TestHiddenFoldersSkipped(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "std/.cache/old.md", "x")
	w := newTestWatcher(t, root, []string{"std"})
	ch := w.Subscribe()
	mkfile(t, root, "std/.cache/c.md", "x")
	mkfile(t, root, "std/.hidden.md", "x")
	mkfile(t, root, "std/.git/HEAD", "x")
	mkfile(t, root, "std/visible.md", "x")
	seen := waitFor(t, ch, "std/visible.md")
	for p := range seen {
		if p != "std/visible.md" {
			t.Errorf("reported hidden path %s", p)
		}
	}
}

func TestMissingFolderCreatedLater(t *testing.T) {
	root := t.TempDir()
	w := newTestWatcher(t, root, []string{".praxis-os/usage"})
	ch := w.Subscribe()
	mkfile(t, root, ".praxis-os/usage/u.md", "u")
	waitFor(t, ch, ".praxis-os/usage/u.md")
	mkfile(t, root, ".praxis-os/usage/v.md", "v")
	waitFor(t, ch, ".praxis-os/usage/v.md")
	mkfile(t, root, ".praxis-os/other/o.md", "o") // outside the target: never reported
	if err := os.RemoveAll(filepath.Join(root, ".praxis-os/usage")); err != nil {
		t.Fatal(err)
	}
	seen := waitFor(t, ch, ".praxis-os/usage")
	if seen[".praxis-os/other/o.md"] {
		t.Error("reported a file outside the watched folders")
	}
	// Recreated after removal: noticed again.
	mkfile(t, root, ".praxis-os/usage/w.md", "w")
	waitFor(t, ch, ".praxis-os/usage/w.md")
}

func TestEverySubscriberGetsEveryBatch(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "std/a.md", "a")
	w := newTestWatcher(t, root, []string{"std"})
	one, two := w.Subscribe(), w.Subscribe()
	mkfile(t, root, "std/b.md", "b")
	waitFor(t, one, "std/b.md")
	waitFor(t, two, "std/b.md")
}

func TestCloseClosesChannels(t *testing.T) {
	root := t.TempDir()
	w, err := New(root, []string{"std"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := w.Subscribe()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	for range ch {
	}
	if _, ok := <-w.Subscribe(); ok {
		t.Fatal("subscribe after close should give a closed channel")
	}
}

func TestNewRejectsBadPaths(t *testing.T) {
	if _, err := New("relative", nil, nil); err == nil {
		t.Error("relative root accepted")
	}
	if _, err := New(t.TempDir(), []string{"../up"}, nil); err == nil {
		t.Error("folder outside the root accepted")
	}
}

// TestRootTargetWatched checks a watcher of the root itself (a project
// whose standards path is "."): files in the root and in folders below it,
// old and new, are reported, and hidden folders such as .git are not.
func TestRootTargetWatched(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "docs/a.md", "a")
	mkfile(t, root, ".git/HEAD", "ref")
	w := newTestWatcher(t, root, []string{"."})
	ch := w.Subscribe()
	mkfile(t, root, "docs/a.md", "a2")
	mkfile(t, root, "top.md", "t")
	waitFor(t, ch, "docs/a.md", "top.md")
	mkfile(t, root, "new/deep/x.md", "x")
	waitFor(t, ch, "new/deep/x.md")
	mkfile(t, root, ".git/index", "i")
	quietFor(t, ch, root, "sentinel.md", ".git/index")
}
