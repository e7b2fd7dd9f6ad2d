package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
)

// defaultSources are the praxis-os source folders.
var defaultSources = []string{".praxis-os/standards", ".praxis-os/usage", ".praxis-os/workflows"}

func openDB(t testing.TB) *store.DB {
	t.Helper()
	return openDBAt(t, filepath.Join(t.TempDir(), "berth.db"))
}

// openDBAt opens (or creates) the store at path, closed at the test's end.
func openDBAt(t testing.TB, path string) *store.DB {
	t.Helper()
	return storetest.Open(t, path)
}

// writeFiles writes files (path relative to root -> content).
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// openReady opens an index over root and waits for its first catch-up.
func openReady(t testing.TB, db *store.DB, id, root string) *Index {
	t.Helper()
	return openWith(t, Options{Root: root, Sources: defaultSources, DB: db, ProjectID: id})
}

// openWith opens an index with opts and waits for its first catch-up.
func openWith(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ix.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return ix
}

func search(t testing.TB, ix *Index, text string) *Result {
	t.Helper()
	res, err := ix.Search(context.Background(), Query{Text: text, N: 10})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return res
}

// files returns the files of the hits, in order.
func files(res *Result) []string {
	var out []string
	for _, h := range res.Results {
		out = append(out, h.File)
	}
	return out
}

// mustChunks chunks a file the index would take, failing tb when it refuses it.
func mustChunks(tb testing.TB, rel, content string) []*chunk {
	tb.Helper()
	cs, err := buildChunks(rel, content)
	if err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
	return cs
}

// openDBFrom returns db when it is a *store.DB, else a new store.
func openDBFrom(t testing.TB, db any) *store.DB {
	t.Helper()
	if d, ok := db.(*store.DB); ok && d != nil {
		return d
	}
	return openDB(t)
}

// standardsDB writes files into a fresh project folder and opens a fresh
// store beside it: the start of most tests here.
func standardsDB(t testing.TB, files map[string]string) (string, *store.DB) {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	return root, openDB(t)
}
