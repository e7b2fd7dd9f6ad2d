package mounttable

import (
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/gitrepo"
)

// headTTL is how long a worktree's HEAD read is reused: /projects and the
// dashboard ask many times a second at most, and a branch switch shows
// within it.
const headTTL = 500 * time.Millisecond

// repoView is a mount's git repository: its identity, checked once at
// mount, and its HEAD, read again when older than headTTL.
type repoView struct {
	id gitrepo.Identity

	mu   sync.Mutex // guards the fields below; held during a read so that concurrent callers share it
	at   time.Time
	head gitrepo.Head
}

// newRepoView reads the repository root belongs to and logs what it found:
// a .git that joins no repository is logged with the reason.
func newRepoView(root string, log *slog.Logger) *repoView {
	id := gitrepo.Identify(root)
	switch {
	case id.Member():
		log.Info("worktree of a git repository", "repository", id.ID, "common_dir", id.CommonDir, "worktree", id.Worktree)
	case id.Why != "":
		log.Warn("joins no git repository: served as a project of its own", "root", root, "why", id.Why)
	}
	return &repoView{id: id}
}

// describe is the repository for /projects; nil when the root is no
// confirmed worktree. It reads files of the repository: call it without
// the table's lock.
func (r *repoView) describe() *api.Repository {
	if r == nil || !r.id.Member() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.at) >= headTTL {
		h, err := gitrepo.ReadHead(r.id.GitDir, r.id.CommonDir)
		if err != nil {
			h = gitrepo.Head{}
		}
		r.head, r.at = h, now
	}
	name := filepath.Base(r.id.MainRoot)
	if r.id.MainRoot == "" {
		name = filepath.Base(r.id.CommonDir)
	}
	return &api.Repository{ID: r.id.ID, Name: name, CommonDir: r.id.CommonDir, Worktree: r.id.Worktree, Branch: r.head.Branch, Commit: r.head.Commit}
}
