package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fakeFS records watches; events come from a channel the test feeds.
type fakeFS struct{ added []string }

func (f *fakeFS) Add(name string) error    { f.added = append(f.added, name); return nil }
func (f *fakeFS) Remove(name string) error { return nil }
func (f *fakeFS) Close() error             { return nil }

// stdRoot is a root with a "std" folder.
func stdRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "std"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// fakeWatcher watches root's std folder, inside a synctest bubble, with
// events the test sends; it returns them and a subscription. The watcher
// is closed when the test ends.
func fakeWatcher(t *testing.T, root string) (chan<- fsnotify.Event, <-chan []string) {
	t.Helper()
	events := make(chan fsnotify.Event)
	w, err := newWatcher(root, []string{"std"}, nil, &fakeFS{}, events, make(chan error))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return events, w.Subscribe()
}

func TestDebounce(t *testing.T) {
	root := stdRoot(t)
	synctest.Test(t, func(t *testing.T) {
		events, ch := fakeWatcher(t, root)
		send := func(name string) {
			events <- fsnotify.Event{Name: filepath.Join(root, "std", name), Op: fsnotify.Write}
		}
		recv := func() []string {
			select {
			case b := <-ch:
				return b
			default:
				return nil
			}
		}

		// Two writes 50ms apart: one batch, Quiet after the last.
		start := time.Now()
		send("a.md")
		time.Sleep(50 * time.Millisecond)
		send("b.md")
		time.Sleep(Quiet - time.Millisecond)
		synctest.Wait()
		if b := recv(); b != nil {
			t.Fatalf("batch before the quiet period ended: %v", b)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if b := recv(); len(b) != 2 || b[0] != "std/a.md" || b[1] != "std/b.md" {
			t.Fatalf("batch = %v, want [std/a.md std/b.md]", b)
		}
		if got := time.Since(start); got != 50*time.Millisecond+Quiet {
			t.Fatalf("delivered after %v", got)
		}

		// A busy folder: a write every 40ms still delivers by MaxDelay.
		start = time.Now()
		var got []string
		for i := 0; got == nil && i < 20; i++ {
			send("busy.md")
			time.Sleep(40 * time.Millisecond)
			synctest.Wait()
			got = recv()
		}
		if got == nil || time.Since(start) > MaxDelay+40*time.Millisecond {
			t.Fatalf("busy folder: batch %v after %v, want one within MaxDelay", got, time.Since(start))
		}
		// Chmod alone is not a change.
		events <- fsnotify.Event{Name: filepath.Join(root, "std", "c.md"), Op: fsnotify.Chmod}
		time.Sleep(MaxDelay * 2)
		synctest.Wait()
		if b := recv(); b != nil && !(len(b) == 1 && b[0] == "std/busy.md") {
			t.Fatalf("chmod produced %v", b)
		}
	})
}

// TestBurstIsDeliveredAtOnce: Burst changed paths make a batch as the last
// of them comes, with no quiet period; what follows waits for one as
// before.
func TestBurstIsDeliveredAtOnce(t *testing.T) {
	root := stdRoot(t)
	synctest.Test(t, func(t *testing.T) {
		events, ch := fakeWatcher(t, root)
		start := time.Now()
		for i := range Burst + 10 {
			events <- fsnotify.Event{Name: filepath.Join(root, "std", fmt.Sprintf("f%04d.md", i)), Op: fsnotify.Create}
		}
		synctest.Wait()
		var first []string
		select {
		case first = <-ch:
		default:
			t.Fatal("no batch after Burst paths, before any quiet period")
		}
		if len(first) != Burst || time.Since(start) != 0 {
			t.Fatalf("first batch: %d paths after %v, want %d at once", len(first), time.Since(start), Burst)
		}
		time.Sleep(Quiet)
		synctest.Wait()
		select {
		case rest := <-ch:
			if len(rest) != 10 || rest[0] != fmt.Sprintf("std/f%04d.md", Burst) {
				t.Fatalf("the rest: %v", rest)
			}
		default:
			t.Fatal("the paths after the burst were not delivered after the quiet period")
		}
	})
}
