package watch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/project/links"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestLinkTargetsEditsReported: an edit of an admitted link's target,
// inside the root or in an allowed folder outside it, is reported as a
// change of the link; a link the policy refuses is not followed.
func TestLinkTargetsEditsReported(t *testing.T) {
	base := t.TempDir()
	root, shared, private := filepath.Join(base, "root"), filepath.Join(base, "shared"), filepath.Join(base, "private")
	mkfile(t, root, "docs/d.md", "d")
	mkfile(t, root, "std/plain.md", "p")
	mkfile(t, shared, "s.md", "s")
	mkfile(t, private, "p.md", "p")
	symlink(t, "../docs/d.md", filepath.Join(root, "std/inside.md"))
	symlink(t, filepath.Join(shared, "s.md"), filepath.Join(root, "std/shared.md"))
	symlink(t, filepath.Join(private, "p.md"), filepath.Join(root, "std/private.md"))
	w := newTestWatcher(t, root, []string{"std"}, FollowLinks(links.New(root, []string{shared})))
	ch := w.Subscribe()

	mkfile(t, shared, "s.md", "s2")
	waitFor(t, ch, "std/shared.md")
	mkfile(t, root, "docs/d.md", "d2")
	waitFor(t, ch, "std/inside.md")
	// An editor's save by rename replaces the target.
	mkfile(t, shared, "s.md.tmp", "s3")
	if err := os.Rename(filepath.Join(shared, "s.md.tmp"), filepath.Join(shared, "s.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "std/shared.md")

	mkfile(t, private, "p.md", "p2")
	quietFor(t, ch, root, "std/sentinel1.md", "std/private.md")

	// A link made later is followed; a removed one no longer is.
	mkfile(t, shared, "later.md", "l")
	symlink(t, filepath.Join(shared, "later.md"), filepath.Join(root, "std/later.md"))
	waitFor(t, ch, "std/later.md")
	mkfile(t, shared, "later.md", "l2")
	waitFor(t, ch, "std/later.md")
	if err := os.Remove(filepath.Join(root, "std/shared.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "std/shared.md")
	mkfile(t, shared, "s.md", "s4")
	quietFor(t, ch, root, "std/sentinel2.md", "std/shared.md")
}

// TestLinkedFolders: a watched folder that is a link is watched when the
// policy allows its target, and not otherwise, until the link is changed.
func TestLinkedFolders(t *testing.T) {
	base := t.TempDir()
	root, shared, private := filepath.Join(base, "root"), filepath.Join(base, "shared"), filepath.Join(base, "private")
	other := filepath.Join(base, "other")
	mkfile(t, root, "std/x.md", "x")
	mkfile(t, shared, "a.md", "a")
	mkfile(t, private, "b.md", "b")
	mkfile(t, other, "c.md", "c")
	symlink(t, shared, filepath.Join(root, "team"))
	symlink(t, private, filepath.Join(root, "mine"))
	w := newTestWatcher(t, root, []string{"std", "team", "mine"}, FollowLinks(links.New(root, []string{shared, other})))
	ch := w.Subscribe()

	mkfile(t, shared, "a.md", "a2")
	waitFor(t, ch, "team/a.md")
	mkfile(t, shared, "sub/new.md", "n")
	waitFor(t, ch, "team/sub/new.md")
	mkfile(t, private, "b.md", "b2")
	quietFor(t, ch, root, "std/sentinel1.md", "mine/b.md")

	// The refused link is pointed at an allowed folder: it is watched.
	if err := os.Remove(filepath.Join(root, "mine")); err != nil {
		t.Fatal(err)
	}
	symlink(t, other, filepath.Join(root, "mine"))
	waitFor(t, ch, "mine", "mine/c.md")
	mkfile(t, other, "c.md", "c2")
	waitFor(t, ch, "mine/c.md")
	mkfile(t, private, "b.md", "b3")
	quietFor(t, ch, root, "std/sentinel2.md", "mine/b.md")
}
