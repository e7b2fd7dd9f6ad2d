package project

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/berth-dev/berth/project/gitrepo"
)

// remotes is the origin remote of each repository whose worktrees were
// mounted, read once with git and taken again by its other worktrees while
// the repository's config files are what they were: a sibling worktree's
// mount then runs no git process for its name (two of them took a third
// of its attach under load).
var remotes remoteCache

type remoteCache struct {
	mu     sync.Mutex
	byRepo map[string]cachedRemote // by common git directory
}

// cachedRemote is a remote as git read it, with the config files it was
// read with: the repository's and the worktree's own (config.worktree),
// nil when absent.
type cachedRemote struct {
	config, worktreeConfig []byte
	remote                 string
}

// remoteOf returns the URL of root's origin remote as readRemote does.
// For a confirmed worktree of a repository whose config includes no other
// file, git's answer for a sibling is taken when the config files read the
// same now as then (the user's and the system's git config are taken as
// unchanged: a remote is the repository's).
func (c *remoteCache) remoteOf(ctx context.Context, root string, repo gitrepo.Identity) string {
	if !repo.Member() {
		return readRemote(ctx, root)
	}
	config, err := os.ReadFile(filepath.Join(repo.CommonDir, "config"))
	if err != nil || bytes.Contains(bytes.ToLower(config), []byte("[include")) {
		return readRemote(ctx, root)
	}
	wtConfig, err := os.ReadFile(filepath.Join(repo.GitDir, "config.worktree"))
	if err != nil && !os.IsNotExist(err) {
		return readRemote(ctx, root)
	}
	if bytes.Contains(bytes.ToLower(wtConfig), []byte("[include")) {
		return readRemote(ctx, root)
	}
	c.mu.Lock()
	got, ok := c.byRepo[repo.CommonDir]
	c.mu.Unlock()
	if ok && bytes.Equal(got.config, config) && bytes.Equal(got.worktreeConfig, wtConfig) {
		return got.remote
	}
	remote := readRemote(ctx, root)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRepo == nil {
		c.byRepo = map[string]cachedRemote{}
	}
	c.byRepo[repo.CommonDir] = cachedRemote{config: config, worktreeConfig: wtConfig, remote: remote}
	return remote
}
