package broker

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/project/search"
)

// contentIndexes holds, by repository, the search content index its
// worktrees share (search.Shared): a file identical in several worktrees is
// indexed once. Only confirmed worktrees share one: a root whose .git merely
// claims a repository gets an index of its own.
type contentIndexes struct {
	mu     sync.Mutex // guards byRepo; held only to find or add an entry
	byRepo map[string]*search.Shared
}

// of returns the content index of id's repository, nil when the project
// keeps an index of its own: when it is no confirmed worktree, when its
// repository has no linked worktree (a lone checkout keeps its stored
// index, reopened without a rebuild), or when sections are embedded (a
// view holds no vectors).
func (c *contentIndexes) of(id gitrepo.Identity, embedded bool, log *slog.Logger) *search.Shared {
	if !id.Member() || embedded || (id.Worktree == "" && !hasLinkedWorktrees(id.CommonDir)) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRepo == nil {
		c.byRepo = map[string]*search.Shared{}
	}
	sh := c.byRepo[id.ID]
	if sh == nil {
		sh = search.NewShared(log.With("repository", id.ID))
		c.byRepo[id.ID] = sh
	}
	return sh
}

// hasLinkedWorktrees reports whether the common git directory records a
// linked worktree (an entry of its worktrees folder).
func hasLinkedWorktrees(commonDir string) bool {
	f, err := os.Open(filepath.Join(commonDir, "worktrees"))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}
