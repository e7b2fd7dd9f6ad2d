package mounttable

import (
	"errors"
	"os"
)

// forgetEvery is how many vanish checks pass between two sweeps for
// removed git worktrees.
const forgetEvery = 4

// forgetRemovedWorktrees deletes from berth.db every project that was a
// linked git worktree and is gone: its root and its admin folder in the
// common directory no longer exist (`git worktree remove`, or `git
// worktree prune` after its directory was deleted) and it is not mounted.
// Such a project cannot come back: its index, sessions and approvals
// would be kept for nothing. A plain project whose directory vanished is
// kept (it may be on a disk that is not mounted now).
func (table *Table) forgetRemovedWorktrees() {
	recs, _, err := table.db.Projects()
	if err != nil {
		table.log.Warn("read the registry for removed git worktrees", "err", err)
		return
	}
	for _, r := range recs {
		if r.WorktreeAdmin == "" || present(r.Root) || present(r.WorktreeAdmin) {
			continue
		}
		table.regMu.Lock()
		table.mu.Lock()
		_, mounted := table.slots[r.ID]
		table.mu.Unlock()
		if !mounted {
			err = table.db.ForgetProject(r.ID)
		}
		table.regMu.Unlock()
		switch {
		case mounted:
		case err != nil:
			table.log.Warn("forget a removed git worktree", "project", r.ID, "root", r.Root, "err", err)
		default:
			table.log.Info("forgot a removed git worktree: its directory and its admin folder are gone", "project", r.ID, "root", r.Root, "admin", r.WorktreeAdmin)
		}
	}
}

// present reports whether path exists; an error other than "not there"
// counts as there.
func present(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}
