package watch

import (
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

func TestDebounce(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "std"), 0o755); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		events := make(chan fsnotify.Event)
		w, err := newWatcher(root, []string{"std"}, nil, &fakeFS{}, events, make(chan error))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ch := w.Subscribe()
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
