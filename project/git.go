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

// ReadGit reads root's git state fresh; nil when root is not in a git
// repository or git is not installed.
func ReadGit(ctx context.Context, root string) *GitInfo {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	run := func(args ...string) (string, bool) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err == nil
	}
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
