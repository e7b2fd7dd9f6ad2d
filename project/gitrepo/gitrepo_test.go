package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit on main and returns its root.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "repo")
	git(t, dir, "init", "-q", "-b", "main", root)
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "a.md")
	git(t, root, "commit", "-q", "-m", "a")
	return root
}

func TestMainAndLinkedWorktreesShareOneRepository(t *testing.T) {
	root := newRepo(t)
	wt := filepath.Join(filepath.Dir(root), "wt-one")
	git(t, root, "worktree", "add", "-q", "-b", "feature", wt)

	main, linked := Identify(root), Identify(wt)
	if !main.Member() || !linked.Member() {
		t.Fatalf("not members: main %+v, linked %+v", main, linked)
	}
	if main.ID != linked.ID || main.CommonDir != linked.CommonDir {
		t.Fatalf("different repositories: %+v and %+v", main, linked)
	}
	if main.Worktree != "" || linked.Worktree != "wt-one" || linked.MainRoot != root {
		t.Fatalf("main %+v, linked %+v", main, linked)
	}
	want := git(t, wt, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(want) {
		want = filepath.Join(wt, want)
	}
	if want, _ = filepath.EvalSymlinks(want); linked.CommonDir != want {
		t.Fatalf("common dir %s, git says %s", linked.CommonDir, want)
	}

	head, err := ReadHead(linked.GitDir, linked.CommonDir)
	if err != nil || head.Branch != "feature" || head.Commit != git(t, wt, "rev-parse", "HEAD") {
		t.Fatalf("head %+v, %v", head, err)
	}
	git(t, wt, "checkout", "-q", "--detach")
	head, err = ReadHead(linked.GitDir, linked.CommonDir)
	if err != nil || head.Branch != "" || head.Commit != git(t, wt, "rev-parse", "HEAD") {
		t.Fatalf("detached head %+v, %v", head, err)
	}
	git(t, root, "pack-refs", "--all")
	head, err = ReadHead(main.GitDir, main.CommonDir)
	if err != nil || head.Branch != "main" || head.Commit != git(t, root, "rev-parse", "HEAD") {
		t.Fatalf("packed main head %+v, %v", head, err)
	}
}

func TestRelativePathsWorktree(t *testing.T) {
	root := newRepo(t)
	wt := filepath.Join(filepath.Dir(root), "rel")
	git(t, root, "worktree", "add", "-q", "-b", "rel", wt)
	// What `git worktree add --relative-paths` writes (git 2.48 and later).
	admin := filepath.Join(root, ".git", "worktrees", "rel")
	write(t, filepath.Join(wt, ".git"), "gitdir: ../repo/.git/worktrees/rel\n")
	write(t, filepath.Join(admin, "gitdir"), "../../../../rel/.git\n")
	if id := Identify(wt); !id.Member() || id.Worktree != "rel" {
		t.Fatalf("relative worktree: %+v", id)
	}
}

func TestForgedClaimsJoinNothing(t *testing.T) {
	victim := newRepo(t)
	wt := filepath.Join(filepath.Dir(victim), "real-wt")
	git(t, victim, "worktree", "add", "-q", "-b", "b", wt)
	victimID := Identify(victim).ID

	cases := map[string]struct {
		dotgit string // the .git file's content
		setup  func(t *testing.T, root string)
		why    string
	}{
		"names a sibling's admin folder": {
			dotgit: "gitdir: " + filepath.Join(victim, ".git", "worktrees", "real-wt"),
			why:    "not back to",
		},
		"names the common directory itself": {
			dotgit: "gitdir: " + filepath.Join(victim, ".git"),
			why:    "not a worktree's admin folder",
		},
		"names an admin folder of its own outside worktrees/": {
			setup: func(t *testing.T, root string) {
				admin := filepath.Join(root, "fake")
				os.MkdirAll(admin, 0o755)
				write(t, filepath.Join(admin, "commondir"), filepath.Join(victim, ".git"))
				write(t, filepath.Join(admin, "gitdir"), filepath.Join(root, ".git"))
				write(t, filepath.Join(admin, "HEAD"), "ref: refs/heads/main")
			},
			dotgit: "gitdir: fake",
			why:    "which is not in",
		},
		"is not a gitdir line": {dotgit: "hello", why: "does not start with"},
		"names nothing":        {dotgit: "gitdir: /nonexistent/x", why: "cannot be resolved"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			if c.setup != nil {
				c.setup(t, root)
			}
			write(t, filepath.Join(root, ".git"), c.dotgit+"\n")
			id := Identify(root)
			if id.Member() || id.ID == victimID {
				t.Fatalf("forged claim joined: %+v", id)
			}
			if !strings.Contains(id.Why, c.why) {
				t.Fatalf("why %q, want it to say %q", id.Why, c.why)
			}
		})
	}

	t.Run("a .git directory with a commondir file", func(t *testing.T) {
		root, _ := filepath.EvalSymlinks(t.TempDir())
		os.MkdirAll(filepath.Join(root, ".git"), 0o755)
		write(t, filepath.Join(root, ".git", "commondir"), filepath.Join(victim, ".git"))
		if id := Identify(root); id.Member() || !strings.Contains(id.Why, "commondir") {
			t.Fatalf("joined through commondir: %+v", id)
		}
	})
}

func TestOwnersMustMatch(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root owns / too")
	}
	dir := t.TempDir()
	if why := sameOwner(dir, dir, ""); why != "" {
		t.Fatalf("one owner refused: %s", why)
	}
	if why := sameOwner(dir, "/"); !strings.Contains(why, "belong to one account") {
		t.Fatalf("another account's directory admitted: %q", why)
	}
}

func TestNoGitIsNoRepository(t *testing.T) {
	if id := Identify(t.TempDir()); id != (Identity{}) {
		t.Fatalf("identity without .git: %+v", id)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFIFOHeadDoesNotBlock(t *testing.T) {
	root := newRepo(t)
	id := Identify(root)
	head := filepath.Join(id.GitDir, "HEAD")
	os.Remove(head)
	if err := syscall.Mkfifo(head, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadHead(id.GitDir, id.CommonDir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO HEAD read: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO HEAD blocked")
	}
}
