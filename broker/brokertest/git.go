package brokertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs git in dir, with no user or system config, and returns its
// trimmed output; the test fails when git does.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	return GitInput(tb, dir, "", args...)
}

// GitInput is Git with stdin as git's standard input, such as a stream
// for git fast-import.
func GitInput(tb testing.TB, dir, stdin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=berth", "GIT_AUTHOR_EMAIL=berth@example.com",
		"GIT_COMMITTER_NAME=berth", "GIT_COMMITTER_EMAIL=berth@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		// glibc gives the heap back after every object git compresses
		// (one brk call each, costly in a virtual machine): a pad of
		// 64 MiB keeps it, and git add of 2,000 files takes a tenth of
		// the CPU.
		"MALLOC_TOP_PAD_=67108864")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitRepo makes a project (as Project does) that is a git repository with
// its files committed on branch main, and returns its root. It skips the
// test when git is not installed.
func GitRepo(tb testing.TB, name string, files map[string]string) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	root := Project(tb, name, files)
	Git(tb, root, "init", "-q", "-b", "main")
	Git(tb, root, "add", "-A")
	Git(tb, root, "commit", "-q", "-m", "first")
	return root
}

// Worktree adds a linked worktree of repo at a new directory name beside
// it, on a new branch of that name, and returns its root.
func Worktree(tb testing.TB, repo, name string) string {
	tb.Helper()
	wt := filepath.Join(filepath.Dir(repo), name)
	Git(tb, repo, "worktree", "add", "-q", "-b", name, wt)
	return wt
}
