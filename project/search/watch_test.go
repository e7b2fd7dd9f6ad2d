package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/watch"
)

// eventually polls a search until its files equal want, within a failsafe
// bound (never a timing assertion: the latency is measured in benchmarks).
func eventually(t *testing.T, ix *Index, q string, want ...string) {
	t.Helper()
	var got []string
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { got = files(search(t, ix, q)); return slices.Equal(got, want) }) {
		t.Fatalf("%q -> %v, want %v", q, got, want)
	}
}

func TestWatcherKeepsIndexCurrent(t *testing.T) {
	root, db := standardsDB(t, baseCorpus)

	start := func() (*Index, func()) {
		w, err := watch.New(root, defaultSources, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix := openReady(t, db, "p", root)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); Watch(ctx, ix, w.Subscribe()) }()
		return ix, func() {
			cancel()
			w.Close()
			<-done
			ix.Close()
		}
	}
	ix, stop := start()
	p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	writeFiles(t, root, map[string]string{".praxis-os/standards/new.md": "# New\n\nQuokka sightings.\n"})
	eventually(t, ix, "quokka", ".praxis-os/standards/new.md")

	writeFiles(t, root, map[string]string{".praxis-os/standards/new.md": "# New\n\nWombat sightings.\n"})
	eventually(t, ix, "wombat", ".praxis-os/standards/new.md")
	eventually(t, ix, "quokka")

	if err := os.Rename(p(".praxis-os/standards/new.md"), p(".praxis-os/usage/renamed.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, ix, "wombat", ".praxis-os/usage/renamed.md")

	writeFiles(t, root, map[string]string{".praxis-os/standards/deep/er/x.md": "# Deep\n\nPlatypus.\n"})
	eventually(t, ix, "platypus", ".praxis-os/standards/deep/er/x.md")

	if err := os.RemoveAll(p(".praxis-os/standards/deep")); err != nil {
		t.Fatal(err)
	}
	eventually(t, ix, "platypus")
	if err := os.Remove(p(".praxis-os/usage/renamed.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, ix, "wombat")

	writeFiles(t, root, map[string]string{".praxis-os/standards/.cache/hidden.md": "# H\n\nEchidna.\n"})
	writeFiles(t, root, map[string]string{".praxis-os/standards/kept.md": "# Kept\n\nNumbat.\n"})
	eventually(t, ix, "numbat", ".praxis-os/standards/kept.md")
	eventually(t, ix, "echidna")

	// Restart: nothing changed, so nothing is read again.
	stop()
	ix, stop = start()
	defer stop()
	if st := ix.Status(); st.FilesRead != 0 {
		t.Fatalf("restart read %d files, want 0", st.FilesRead)
	}
	eventually(t, ix, "numbat", ".praxis-os/standards/kept.md")
}

// TestWhileExistsIdleAfterStaging: while the lock exists, each batch is
// staged as it comes, and idle is called once the staged batches are
// followed by a pause, before the lock goes; whileExists returns every
// batch once it is gone.
func TestWhileExistsIdleAfterStaging(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	changes := make(chan []string)
	staged := make(chan []string, 2)
	idle := make(chan struct{}, 8)
	type result struct {
		batch []string
		ok    bool
	}
	done := make(chan result, 1)
	go func() {
		batch, ok := whileExists(context.Background(), lock, []string{"a.md"}, changes,
			func(paths []string) { staged <- paths }, func() { idle <- struct{}{} })
		done <- result{batch, ok}
	}()
	changes <- []string{"b.md"}
	select {
	case <-idle:
	case <-time.After(brokertest.WaitLimit):
		t.Fatal("idle was not called while the lock exists after the batches were staged")
	}
	if len(staged) != 2 {
		t.Fatalf("%d batches staged before idle, want 2", len(staged))
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !r.ok || !slices.Equal(r.batch, []string{"a.md", "b.md"}) {
			t.Fatalf("whileExists returned %v, %v; want both batches", r.batch, r.ok)
		}
	case <-time.After(brokertest.WaitLimit):
		t.Fatal("whileExists did not return once the lock was gone")
	}
}
