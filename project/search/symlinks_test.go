package search

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/project/links"
	"github.com/berth-dev/berth/project/watch"
)

// syncBuf is a log destination read while the index writes to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }

func (s *syncBuf) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// linkFixture is a project whose standards hold links: to a file inside
// the project but outside the sources, to a shared folder, and to a
// private file; and whose usage folder is itself a link to a private
// folder.
type linkFixture struct {
	base, root, shared, private string
}

func newLinkFixture(t *testing.T) linkFixture {
	t.Helper()
	base := t.TempDir()
	f := linkFixture{base: base, root: filepath.Join(base, "project"), shared: filepath.Join(base, "shared"), private: filepath.Join(base, "private")}
	writeFiles(t, f.root, map[string]string{
		".praxis-os/standards/plain.md": "# Plain\n\nAardvark.\n",
		"docs/inside.md":                "# Inside\n\nBilby burrows.\n",
	})
	writeFiles(t, f.shared, map[string]string{"team.md": "# Team\n\nCassowary rules.\n"})
	writeFiles(t, f.private, map[string]string{"secret.md": "# Secret\n\nDingo password.\n", "usage/u.md": "# U\n\nEmu notes.\n"})
	for link, target := range map[string]string{
		".praxis-os/standards/inside.md": "../../docs/inside.md",
		".praxis-os/standards/team.md":   filepath.Join(f.shared, "team.md"),
		".praxis-os/standards/secret.md": filepath.Join(f.private, "secret.md"),
		".praxis-os/usage":               filepath.Join(f.private, "usage"),
	} {
		if err := os.Symlink(target, filepath.Join(f.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// linkFixtureFinds is what a search of the link fixture finds when the
// shared folder is allowed: the links inside and to it, not the private.
var linkFixtureFinds = map[string][]string{
	"aardvark":  {".praxis-os/standards/plain.md"},
	"bilby":     {".praxis-os/standards/inside.md"},
	"cassowary": {".praxis-os/standards/team.md"},
	"dingo":     nil,
	"emu":       nil,
}

func TestSymlinkPolicy(t *testing.T) {
	f := newLinkFixture(t)
	db := openDB(t)
	var logs syncBuf
	opts := func(allow ...string) Options {
		return Options{Root: f.root, Sources: defaultSources, DB: db, ProjectID: "p",
			Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Links: links.New(f.root, allow)}
	}
	ix := openWith(t, opts(f.shared))
	for q, want := range linkFixtureFinds {
		if got := files(search(t, ix, q)); !slices.Equal(got, want) {
			t.Errorf("%q -> %v, want %v", q, got, want)
		}
	}
	st := ix.Status()
	if st.Files != 3 || st.SkippedFiles != 1 || len(st.Warnings) != 2 {
		t.Fatalf("status %d files, %d skipped, warnings %q; want 3, 1 and two warnings", st.Files, st.SkippedFiles, st.Warnings)
	}
	for i, w := range []string{".praxis-os/standards/secret.md", ".praxis-os/usage"} {
		if !strings.HasPrefix(st.Warnings[i], w+" is not indexed") || !strings.Contains(st.Warnings[i], f.private) || !strings.Contains(st.Warnings[i], "rag.allow_outside") {
			t.Errorf("warning %q does not name %s, its target and the fix", st.Warnings[i], w)
		}
	}
	// Asking for the file directly (as the watcher does) changes nothing,
	// and the warning is logged once.
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/secret.md", ".praxis-os/usage/u.md", ".praxis-os/usage"}); err != nil {
		t.Fatal(err)
	}
	if got := files(search(t, ix, "dingo emu")); len(got) != 0 {
		t.Fatalf("after Apply: %v", got)
	}
	if n := logs.count(`"path":".praxis-os/standards/secret.md"`); n != 1 {
		t.Fatalf("%d log lines about secret.md, want 1", n)
	}
	ix.Close()

	// Reopened with the same policy: still reported, nothing read again.
	ix = openWith(t, opts(f.shared))
	if st := ix.Status(); st.FilesRead != 0 || len(st.Warnings) != 2 || st.SkippedFiles != 1 {
		t.Fatalf("reopened: read %d files, warnings %q, %d skipped", st.FilesRead, st.Warnings, st.SkippedFiles)
	}
	ix.Close()

	// The owner allows the private folder: its files are indexed.
	ix = openWith(t, opts(f.shared, f.private))
	if got := files(search(t, ix, "dingo emu")); !slices.Equal(got, []string{".praxis-os/standards/secret.md", ".praxis-os/usage/u.md"}) &&
		!slices.Equal(got, []string{".praxis-os/usage/u.md", ".praxis-os/standards/secret.md"}) {
		t.Fatalf("allowed: %v", got)
	}
	if st := ix.Status(); len(st.Warnings) != 0 || st.SkippedFiles != 0 {
		t.Fatalf("allowed: warnings %q, %d skipped", st.Warnings, st.SkippedFiles)
	}
	ix.Close()

	// And takes it back: they leave the index.
	ix = openWith(t, opts())
	if got := files(search(t, ix, "dingo emu cassowary")); len(got) != 0 {
		t.Fatalf("allowance withdrawn: %v", got)
	}
	if st := ix.Status(); len(st.Warnings) != 3 {
		t.Fatalf("allowance withdrawn: warnings %q", st.Warnings)
	}
}

// TestLinksStayInsideByDefault: without a policy only links inside the
// root are followed.
func TestLinksStayInsideByDefault(t *testing.T) {
	f := newLinkFixture(t)
	ix := openReady(t, openDB(t), "p", f.root)
	if got := files(search(t, ix, "bilby cassowary dingo emu")); !slices.Equal(got, []string{".praxis-os/standards/inside.md"}) {
		t.Fatalf("default policy: %v", got)
	}
}

// TestAllowedLinkTargetEditsPickedUp: with the watcher following the same
// policy, an edit of an allowed link's target outside the project reaches
// the index like an edit of the link.
func TestAllowedLinkTargetEditsPickedUp(t *testing.T) {
	f := newLinkFixture(t)
	policy := links.New(f.root, []string{f.shared})
	w, err := watch.New(f.root, defaultSources, nil, watch.FollowLinks(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ix := openWith(t, Options{Root: f.root, Sources: defaultSources, DB: openDB(t), ProjectID: "p", Links: policy})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); Watch(ctx, ix, w.Subscribe()) }()
	defer func() { cancel(); <-done }()

	writeFiles(t, f.shared, map[string]string{"team.md": "# Team\n\nKookaburra rules.\n"})
	eventually(t, ix, "kookaburra", ".praxis-os/standards/team.md")
	eventually(t, ix, "cassowary")
	writeFiles(t, f.root, map[string]string{"docs/inside.md": "# Inside\n\nLyrebird.\n"})
	eventually(t, ix, "lyrebird", ".praxis-os/standards/inside.md")
	// The private target is neither watched nor read.
	writeFiles(t, f.private, map[string]string{"secret.md": "# Secret\n\nMarsupial.\n"})
	writeFiles(t, f.root, map[string]string{".praxis-os/standards/plain.md": "# Plain\n\nNumbat.\n"})
	eventually(t, ix, "numbat", ".praxis-os/standards/plain.md")
	eventually(t, ix, "marsupial dingo")
}

// TestSymlinkPolicyInSharedView: a worktree's view of a shared index,
// which reads files through its opened folders, follows the same policy:
// links inside the project and to allowed folders are read, the others
// reported and not read, on the first catch-up and on Apply.
func TestSymlinkPolicyInSharedView(t *testing.T) {
	f := newLinkFixture(t)
	db := openDB(t)
	ix := openWith(t, Options{Root: f.root, Sources: defaultSources, DB: db, ProjectID: "p",
		Links: links.New(f.root, []string{f.shared}), Shared: NewShared(nil)})
	check := func(when string) {
		t.Helper()
		for q, want := range linkFixtureFinds {
			if got := files(search(t, ix, q)); !slices.Equal(got, want) {
				t.Errorf("%s: %q -> %v, want %v", when, q, got, want)
			}
		}
		if st := ix.Status(); st.Files != 3 || st.SkippedFiles != 1 || len(st.Warnings) != 2 {
			t.Fatalf("%s: status %d files, %d skipped, warnings %q; want 3, 1 and two warnings", when, st.Files, st.SkippedFiles, st.Warnings)
		}
	}
	check("first catch-up")
	// The plain file becomes a link to the private file: it is dropped.
	plain := filepath.Join(f.root, ".praxis-os/standards/plain.md")
	if err := os.Remove(plain); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.private, "secret.md"), plain); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/plain.md", ".praxis-os/standards/secret.md", ".praxis-os/usage/u.md"}); err != nil {
		t.Fatal(err)
	}
	if got := files(search(t, ix, "aardvark dingo emu")); len(got) != 0 {
		t.Fatalf("after a file became a link outside: %v", got)
	}
	if st := ix.Status(); st.Files != 2 || st.SkippedFiles != 2 {
		t.Fatalf("after a file became a link outside: %d files, %d skipped; want 2 and 2", st.Files, st.SkippedFiles)
	}
}
