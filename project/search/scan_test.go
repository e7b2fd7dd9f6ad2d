package search

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/berth-dev/berth/project/links"
)

// The walk lists every indexable file below the sources, nested folders
// included, and skips hidden folders and files; a linked file inside the project is
// listed, a linked folder below a source is not entered, and a source of
// "." lists the root's files by their names.
func TestScanListsTheSourcesFiles(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{
		"top.md":                         "# Top\n",
		"docs/a.md":                      "# A\n",
		"docs/deep/er/b.md":              "# B\n",
		"docs/.cache/c.md":               "# C\n",
		"docs/.dot.md":                   "# Dot\n",
		"docs/notes.txt":                 "not markdown\n",
		"elsewhere/d.md":                 "# D\n",
		"elsewhere/sub/e.md":             "# E\n",
		".praxis-os/standards/inside.md": "# Inside\n",
	})
	if err := os.Symlink(filepath.Join(root, "elsewhere", "d.md"), filepath.Join(root, "docs", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere", "sub"), filepath.Join(root, "docs", "linked-folder")); err != nil {
		t.Fatal(err)
	}
	scan := func(sources ...string) []string {
		t.Helper()
		ix := &Index{opts: Options{Root: root, Sources: sources, Links: links.New(root, nil)}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		disk, err := ix.scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(disk))
	}
	if got, want := scan("docs"), []string{"docs/a.md", "docs/deep/er/b.md", "docs/link.md"}; !slices.Equal(got, want) {
		t.Errorf("docs: %v, want %v", got, want)
	}
	got := scan(".")
	for _, want := range []string{"top.md", "docs/a.md", "docs/deep/er/b.md", "elsewhere/sub/e.md"} {
		if !slices.Contains(got, want) {
			t.Errorf(". lacks %s: %v", want, got)
		}
	}
	for _, hidden := range []string{".praxis-os/standards/inside.md", "docs/.cache/c.md", "docs/.dot.md", "docs/linked-folder/e.md"} {
		if slices.Contains(got, hidden) {
			t.Errorf(". lists %s: %v", hidden, got)
		}
	}
}
