package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder in no project is served as a folder; a folder in a project is
// that project; the home directory, the folders above it and / are
// refused with the fix; what does not exist is not a project.
func TestRootOrFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home", "me")
	project := filepath.Join(home, "shop")
	folder := filepath.Join(home, "notes")
	for _, d := range []string{filepath.Join(project, ProjectDir), filepath.Join(project, "src"), folder} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(folder, "a.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		dir        string
		root       string
		folder     bool
		err        error
		mentioning string
	}{
		{dir: folder, root: folder, folder: true},
		{dir: filepath.Join(project, "src"), root: project},
		{dir: project, root: project},
		{dir: home, err: ErrFolderRefused, mentioning: "your home directory"},
		{dir: filepath.Join(base, "home"), err: ErrFolderRefused, mentioning: "above your home directory"},
		{dir: "/", err: ErrFolderRefused, mentioning: "the filesystem's root"},
		{dir: filepath.Join(base, "gone"), err: ErrNotProject, mentioning: "does not exist"},
		{dir: file, err: ErrNotProject, mentioning: "not a directory"},
	} {
		root, isFolder, err := RootOrFolder(tc.dir)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.mentioning) {
				t.Errorf("RootOrFolder(%s) = %v, want %v mentioning %q", tc.dir, err, tc.err, tc.mentioning)
			}
			if errors.Is(err, ErrFolderRefused) && !strings.Contains(err.Error(), "--project DIR") {
				t.Errorf("RootOrFolder(%s): %v does not name the fix", tc.dir, err)
			}
			continue
		}
		if err != nil || root != tc.root || isFolder != tc.folder {
			t.Errorf("RootOrFolder(%s) = %q, %v, %v; want %q, %v", tc.dir, root, isFolder, err, tc.root, tc.folder)
		}
	}
}
