package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"
)

func TestHubDeliversEachProjectItsOwnChanges(t *testing.T) {
	h := NewHub()
	defer h.Close()
	a, b := t.TempDir(), t.TempDir()
	mkfile(t, a, "docs/x.md", "1")
	mkfile(t, b, "docs/x.md", "1")
	wa := newTestWatcher(t, a, []string{"docs"}, Shared(h))
	wb := newTestWatcher(t, b, []string{"docs"}, Shared(h))
	ca, cb := wa.Subscribe(), wb.Subscribe()

	mkfile(t, a, "docs/only-a.md", "a")
	waitFor(t, ca, "docs/only-a.md")
	quietFor(t, cb, b, "docs/sentinel.md", "docs/only-a.md") // a's change, never b's
	mkfile(t, b, "docs/sub/only-b.md", "b")
	waitFor(t, cb, "docs/sub/only-b.md")

	if _, n := h.Watching(); n != 2 {
		t.Fatalf("%d watchers on the hub, want 2", n)
	}
	// One project closing leaves the other watching.
	if err := wa.Close(); err != nil {
		t.Fatal(err)
	}
	mkfile(t, b, "docs/after.md", "b")
	waitFor(t, cb, "docs/after.md")
	if _, n := h.Watching(); n != 1 {
		t.Fatalf("%d watchers after one closed, want 1", n)
	}
}

// Two projects watching the same folder (a project inside another): both
// hear of its changes, also after it is removed and made again.
func TestHubSharedFolder(t *testing.T) {
	h := NewHub()
	defer h.Close()
	root := t.TempDir()
	mkfile(t, root, "std/a.md", "1")
	w1 := newTestWatcher(t, root, []string{"std"}, Shared(h))
	outer := filepath.Base(root) + "/std"
	w2 := newTestWatcher(t, filepath.Dir(root), []string{outer}, Shared(h))
	c1, c2 := w1.Subscribe(), w2.Subscribe()
	mkfile(t, root, "std/b.md", "2")
	waitFor(t, c1, "std/b.md")
	waitFor(t, c2, outer+"/b.md")

	if err := os.RemoveAll(filepath.Join(root, "std")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c1, "std")
	waitFor(t, c2, outer)
	mkfile(t, root, "std/again.md", "3")
	waitFor(t, c1, "std/again.md")
	waitFor(t, c2, outer+"/again.md")
}

// A watcher that falls too far behind is told to rescan, never blocks the hub.
func TestHubOverflowTellsTheSlowWatcher(t *testing.T) {
	h := NewHub()
	defer h.Close()
	c, err := h.client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h.mu.Lock()
	for i := range hubBuffer + 5 {
		c.send(fsnotify.Event{Name: fmt.Sprint(i), Op: fsnotify.Write})
	}
	h.mu.Unlock()
	if err := <-c.errs; !errors.Is(err, fsnotify.ErrEventOverflow) {
		t.Fatalf("a client past its buffer got %v, want an overflow", err)
	}
	if len(c.events) != hubBuffer {
		t.Fatalf("%d events buffered, want %d", len(c.events), hubBuffer)
	}
}

func TestClosedHubRefusesWatchers(t *testing.T) {
	h := NewHub()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.TempDir(), []string{"."}, nil, Shared(h)); err == nil {
		t.Fatal("a closed hub made a watcher")
	}
}
