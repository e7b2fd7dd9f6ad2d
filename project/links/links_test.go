package links

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "project")
	shared := filepath.Join(base, "shared")
	private := filepath.Join(base, "private")
	for _, d := range []string{root + "/docs", shared, private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{root + "/docs/in.md", shared + "/s.md", private + "/p.md"} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, target string) string {
		p := filepath.Join(root, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := link("inside.md", "docs/in.md")
	toShared := link("shared.md", shared+"/s.md")
	toPrivate := link("private.md", "../private/p.md")
	sharedDir := link("shareddir", shared)
	privateDir := link("privatedir", private)
	dangling := link("dangling.md", "nowhere.md")
	// A sibling whose name starts with the allowed directory's.
	if err := os.MkdirAll(shared+"-not", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shared+"-not/x.md", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	prefixTrick := link("prefix.md", shared+"-not/x.md")

	p := New(root, []string{shared})
	for _, tc := range []struct {
		path    string
		want    string
		outside bool
	}{
		{inside, root + "/docs/in.md", false},
		{root + "/docs/in.md", root + "/docs/in.md", false},
		{toShared, shared + "/s.md", false},
		{sharedDir + "/s.md", shared + "/s.md", false},
		{toPrivate, "", true},
		{privateDir + "/p.md", "", true},
		{prefixTrick, "", true},
	} {
		got, err := p.Resolve(tc.path)
		var oe *OutsideError
		if tc.outside {
			if !errors.As(err, &oe) || oe.Path != tc.path {
				t.Errorf("%s: %q, %v; want an OutsideError", tc.path, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	if _, err := p.Resolve(dangling); err == nil || errors.As(err, new(*OutsideError)) {
		t.Errorf("dangling link: %v, want a plain error", err)
	}
	if _, err := New(root, nil).Resolve(toShared); !errors.As(err, new(*OutsideError)) {
		t.Errorf("without allow_outside a link to %s was followed: %v", shared, err)
	}
}

func TestRootAndAllowedAreResolved(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real+"/a.md", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	if got, err := New(alias, nil).Resolve(alias + "/a.md"); err != nil || got != real+"/a.md" {
		t.Fatalf("root given through a link: %q, %v", got, err)
	}
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	p := New(other, []string{alias, alias + "/"})
	if got := p.Allowed(); len(got) != 1 || got[0] != real {
		t.Fatalf("Allowed = %v, want [%s]", got, real)
	}
	if !p.Admits(real + "/a.md") {
		t.Fatal("a target inside an allowed directory given through a link is refused")
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		dir, path string
		want      bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a", "/", false}, {"/", "/etc", true},
	} {
		if got := Within(tc.dir, tc.path); got != tc.want {
			t.Errorf("Within(%q, %q) = %v", tc.dir, tc.path, got)
		}
	}
}

// TestReadStaysInTheAdmittingFolder: a path that resolved inside the root
// but whose folder became a link to elsewhere (swapped in after Resolve)
// is not read.
func TestReadStaysInTheAdmittingFolder(t *testing.T) {
	base := t.TempDir()
	root, shared, private := filepath.Join(base, "root"), filepath.Join(base, "shared"), filepath.Join(base, "private")
	for _, f := range []string{root + "/docs/a.md", shared + "/s.md", private + "/docs/a.md"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("content of "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := New(root, []string{shared})
	real, err := p.Resolve(root + "/docs/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadFile(real); err != nil || string(b) != "content of "+root+"/docs/a.md" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if fi, err := p.Stat(shared + "/s.md"); err != nil || fi.Size() != int64(len("content of "+shared+"/s.md")) {
		t.Fatalf("Stat in an allowed folder: %v, %v", fi, err)
	}
	// The folder is swapped for a link to the private one.
	if err := os.RemoveAll(root + "/docs"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private+"/docs", root+"/docs"); err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadFile(real); err == nil {
		t.Fatalf("read %q through a link swapped in after Resolve", b)
	}
	if _, err := p.Stat(real); err == nil {
		t.Fatal("stat through a link swapped in after Resolve")
	}
	if _, err := p.ReadFile(private + "/docs/a.md"); !errors.As(err, new(*OutsideError)) {
		t.Fatalf("ReadFile of a path outside every folder: %v", err)
	}
}
