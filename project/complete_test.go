package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPathsUnder: whatever a client types, the completion of a path lists
// only entries inside the project, as project-relative paths that begin
// with what was typed.
func FuzzPathsUnder(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	for _, p := range []string{"src/main.go", "src/util/io.go", ".git/HEAD", "docs/a.md"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), nil, 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"", "s", "src/", "src/u", ".g", "../", "/etc/", "out/", "out/s", "src/../../", "src//", "./src/", "src/./", "\x00"} {
		f.Add(seed)
	}
	c := &catalog{root: root}
	f.Fuzz(func(t *testing.T, typed string) {
		for _, p := range c.pathsUnder(typed) {
			if !strings.HasPrefix(p, typed) {
				t.Fatalf("%q offered %q, which does not begin with it", typed, p)
			}
			if strings.Contains(p, "secret") || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
				t.Fatalf("%q offered %q, outside the project", typed, p)
			}
			if _, err := os.Lstat(filepath.Join(root, strings.TrimSuffix(p, "/"))); err != nil {
				t.Fatalf("%q offered %q, which is not in the project: %v", typed, p, err)
			}
		}
	})
}
