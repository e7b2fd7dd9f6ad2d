package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzClaims: whatever a checkout's .git file and its named admin folder
// hold, Identify and ReadHead answer without joining a repository that
// does not confirm the claim.
func FuzzClaims(f *testing.F) {
	f.Add("gitdir: admin", "../common", "../checkout/.git", "ref: refs/heads/main")
	f.Add("gitdir: /nonexistent", "", "", "0123456789012345678901234567890123456789")
	f.Add("gitdir: admin\x00", "\n\n", "gitdir", "ref: ../../etc/passwd")
	f.Fuzz(func(t *testing.T, dotgit, commondir, back, head string) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(dir, "checkout")
		admin := filepath.Join(root, "admin")
		os.MkdirAll(admin, 0o755)
		os.MkdirAll(filepath.Join(dir, "common", "worktrees"), 0o755)
		write(t, filepath.Join(root, ".git"), dotgit)
		write(t, filepath.Join(admin, "commondir"), commondir)
		write(t, filepath.Join(admin, "gitdir"), back)
		write(t, filepath.Join(admin, "HEAD"), head)
		id := Identify(root)
		if id.Member() && filepath.Dir(id.AdminDir) != filepath.Join(id.CommonDir, "worktrees") {
			t.Fatalf("joined through an admin folder outside worktrees/: %+v", id)
		}
		if h, err := ReadHead(admin, dir); err == nil && h.Branch != "" && h.Commit != "" && !isCommitID(h.Commit) {
			t.Fatalf("head %+v", h)
		}
	})
}
