package project

import (
	"context"
	"os/exec"
	"path"
	"strings"
	"time"
)

// GitInfo describes the project's git checkout.
type GitInfo struct {
	Remote      string `json:"remote"`
	Branch      string `json:"branch"`
	Commit      string `json:"commit"`
	CommitShort string `json:"commit_short"`
	Status      string `json:"status"` // "clean" or "dirty"
}

// gitRunner runs git in root, each call bounded by the 3 s of ctx.
func gitRunner(ctx context.Context, root string) func(args ...string) (string, bool) {
	return func(args ...string) (string, bool) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err == nil
	}
}

// ReadGit reads root's git state fresh; nil when root is not in a git
// repository or git is not installed.
func ReadGit(ctx context.Context, root string) *GitInfo {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	run := gitRunner(ctx, root)
	if inside, ok := run("rev-parse", "--is-inside-work-tree"); !ok || inside != "true" {
		return nil
	}
	g := &GitInfo{Status: "clean"}
	g.Remote, _ = run("config", "--get", "remote.origin.url")
	g.Branch, _ = run("rev-parse", "--abbrev-ref", "HEAD")
	if c, ok := run("rev-parse", "HEAD"); ok {
		g.Commit = c
		if len(c) >= 7 {
			g.CommitShort = c[:7]
		}
	}
	if st, ok := run("status", "--porcelain"); ok && st != "" {
		g.Status = "dirty"
	}
	return g
}

// readRemote reads the URL of root's origin remote, as ReadGit does and
// without the rest: "" when root is not in a git work tree, has no such
// remote, or git is not installed. A project's name needs only this, and
// ReadGit's `git status` reads every file of the checkout (a third of a
// git worktree's attach when it ran at every mount).
func readRemote(ctx context.Context, root string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	run := gitRunner(ctx, root)
	if inside, ok := run("rev-parse", "--is-inside-work-tree"); !ok || inside != "true" {
		return ""
	}
	remote, _ := run("config", "--get", "remote.origin.url")
	return remote
}

// NameFromRemote is the repository name of a git remote URL:
// "git@host:user/repo.git" and "https://host/user/repo" both give "repo".
func NameFromRemote(remote string) string {
	r := strings.TrimSpace(remote)
	r = strings.TrimSuffix(strings.TrimRight(r, "/"), ".git")
	if i := strings.LastIndexAny(r, ":/"); i >= 0 {
		r = r[i+1:]
	}
	r = path.Base("/" + r)
	if r == "/" || r == "." {
		return ""
	}
	return r
}
