package project

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/gitrepo"
)

// runGitIn runs git in dir with no user or system config.
func runGitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A sibling worktree takes the origin remote git gave its repository's
// first worktree, with no git process (here: none can be found), while the
// repository's config is unchanged; once it changes, or for a repository
// whose config includes other files, git is asked again.
func TestSiblingsTakeTheRemoteGitGave(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	main, wt := filepath.Join(dir, "main"), filepath.Join(dir, "wt")
	runGitIn(t, dir, "init", "-q", "-b", "main", main)
	if err := os.WriteFile(filepath.Join(main, "a.md"), []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGitIn(t, main, "add", "a.md")
	runGitIn(t, main, "commit", "-q", "-m", "a")
	runGitIn(t, main, "remote", "add", "origin", "git@example.com:team/app.git")
	runGitIn(t, main, "worktree", "add", "-q", "-b", "wt", wt)
	idMain, idWt := gitrepo.Identify(main), gitrepo.Identify(wt)
	if !idMain.Member() || !idWt.Member() || idMain.ID != idWt.ID {
		t.Fatalf("not one repository: %+v %+v", idMain, idWt)
	}

	var c remoteCache
	ctx := context.Background()
	if got := c.remoteOf(ctx, main, idMain); got != "git@example.com:team/app.git" {
		t.Fatalf("main: %q", got)
	}
	withGit, noGit := os.Getenv("PATH"), t.TempDir()
	t.Setenv("PATH", noGit)
	if got := c.remoteOf(ctx, wt, idWt); got != "git@example.com:team/app.git" {
		t.Fatalf("sibling, config unchanged: %q", got)
	}
	if got := c.remoteOf(ctx, wt, gitrepo.Identity{}); got != "" {
		t.Fatalf("a root known as no worktree asks git (none here): %q", got)
	}

	config := filepath.Join(idMain.CommonDir, "config")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "team/app.git", "team/other.git", 1)
	if err := os.WriteFile(config, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.remoteOf(ctx, wt, idWt); got != "" {
		t.Fatalf("config changed: git must be asked again (none here), got %q", got)
	}
	if err := os.WriteFile(config, []byte(string(data)+"[include]\n\tpath = more.config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", withGit)
	if got := c.remoteOf(ctx, main, idMain); got != "git@example.com:team/app.git" {
		t.Fatalf("main, config with an include: %q", got)
	}
	t.Setenv("PATH", noGit)
	if got := c.remoteOf(ctx, wt, idWt); got != "" {
		t.Fatalf("a config that includes another file is never taken from the cache: %q", got)
	}
}
