//go:build linux

package watch

import (
	"os"
	"path/filepath"
	"testing"
)

// inotifyInstances counts this process's inotify file descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// 200 projects' watchers take one inotify instance (the kernel allows a
// user 128 by default), and the last of them still hears its changes.
func TestHubTakesOneInotifyInstanceForManyProjects(t *testing.T) {
	before := inotifyInstances(t)
	h := NewHub()
	defer h.Close()
	var last <-chan []string
	var root string
	for i := range 200 {
		root = t.TempDir()
		mkfile(t, root, ".praxis-os/standards/a.md", "x")
		w := newTestWatcher(t, root, []string{".praxis-os/standards", ".praxis-os/workflows"}, Shared(h))
		last = w.Subscribe()
		if i == 0 && inotifyInstances(t) != before+1 {
			t.Fatalf("the first watcher took %d instances", inotifyInstances(t)-before)
		}
	}
	if got := inotifyInstances(t) - before; got != 1 {
		t.Fatalf("200 watchers on one hub hold %d inotify instances, want 1", got)
	}
	mkfile(t, root, ".praxis-os/standards/new.md", "y")
	waitFor(t, last, ".praxis-os/standards/new.md")
}
