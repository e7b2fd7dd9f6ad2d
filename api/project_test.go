package api

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestResolveRoot(t *testing.T) {
	root := newRoot(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	got, err := ResolveRoot(link)
	if err != nil || got != root {
		t.Fatalf("ResolveRoot(symlink) = %q, %v; want %q", got, err, root)
	}
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	if got, err := FindRoot(sub); err != nil || got != root {
		t.Fatalf("FindRoot = %q, %v", got, err)
	}
	for _, bad := range []string{"", t.TempDir(), filepath.Join(root, "missing")} {
		if _, err := ResolveRoot(bad); err == nil {
			t.Errorf("ResolveRoot(%q) succeeded", bad)
		} else if bad != "" && !errors.Is(err, ErrNotProject) {
			t.Errorf("ResolveRoot(%q) = %v, want ErrNotProject", bad, err)
		}
	}
}

func TestProjectIDIsStableAndURLSafe(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9-]+-[0-9a-f]{8}$`)
	for _, root := range []string{"/home/me/shop", "/home/me/Shop Ünïcode (copy)", "/", "/x/..."} {
		id := ProjectID(root)
		if !re.MatchString(id) || id != ProjectID(root) {
			t.Errorf("ProjectID(%q) = %q", root, id)
		}
	}
	if ProjectID("/a/shop") == ProjectID("/b/shop") {
		t.Error("two roots with one name share an id")
	}
}
