package project

import (
	"context"
	"sync"
	"time"
)

// gitTTL is how long a read of the project's git state is reused. Agents
// may call get_server_info many times a second, and each read runs git up
// to five times (a fork and exec each): one read a second keeps the answer
// current for a person and cheap under load.
const gitTTL = time.Second

// gitCache keeps the last git read of one project root.
type gitCache struct {
	read func(ctx context.Context, root string) *GitInfo // ReadGit
	now  func() time.Time                                // time.Now

	mu   sync.Mutex // guards the fields below; held during a read so that concurrent callers share it
	at   time.Time
	info *GitInfo
	have bool
}

func newGitCache() *gitCache { return &gitCache{read: ReadGit, now: time.Now} }

// get returns root's git state, read at most once per gitTTL. The result is
// shared: callers must not modify it.
func (c *gitCache) get(ctx context.Context, root string) *GitInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.have && c.now().Sub(c.at) < gitTTL {
		return c.info
	}
	g := c.read(ctx, root)
	if ctx.Err() != nil { // a read cut short by its caller is not kept
		return g
	}
	c.info, c.at, c.have = g, c.now(), true
	return g
}
