package search

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/berth-dev/berth/project/procs"
)

// Watch applies every batch of changed paths (relative to the root) from
// changes to ix, each as one atomic update, until ctx ends or changes is
// closed. An update that fails is logged and kept in [Status.LastError];
// the loop goes on. Run it in its own goroutine:
//
//	w, _ := watch.New(root, sources, logger) // before Open, so no change is missed
//	ix, _ := search.Open(ctx, opts)
//	go search.Watch(ctx, ix, w.Subscribe())
//
// and on unmount: cancel ctx, w.Close(), ix.Close().
func Watch(ctx context.Context, ix *Index, changes <-chan []string) {
	Follow(ctx, func() *Index { return ix }, changes)
}

// Follow is Watch for an index that may change: each batch goes to the
// index current returns then (none: the batch is dropped). It returns
// when ctx ends, changes is closed, or the current index is closed.
func Follow(ctx context.Context, current func() *Index, changes <-chan []string) {
	for {
		select {
		case <-ctx.Done():
			return
		case batch, ok := <-changes:
			if !ok {
				return
			}
			procs.Enter() // a change applied is work in hand, as a request is
			more := follow(ctx, current, batch, changes)
			procs.Leave()
			if !more {
				return
			}
		}
	}
}

// follow applies one batch of changes (with those that follow it while a
// checkout settles) to the current index. It returns false when the
// watch is over.
func follow(ctx context.Context, current func() *Index, batch []string, changes <-chan []string) bool {
	ix := current()
	if ix == nil {
		return true
	}
	var disk map[string]diskFile
	var st *staged
	if ix.opts.Shared != nil && (len(batch) >= settleFrom || ix.gitBusy()) {
		st = &staged{}
		var ok bool
		batch, disk, ok = ix.settleCheckout(ctx, batch, changes, st)
		if !ok {
			ix.unstage(st)
			return false
		}
	}
	err := ix.apply(ctx, batch, disk, st)
	ix.unstage(st)
	if err != nil && ctx.Err() == nil {
		if errIsClosed(err) {
			return current() != ix // replaced meanwhile: go on with the new one
		}
		ix.log.Warn("search: cannot apply file changes", "paths", len(batch), "err", err)
	}
	return true
}

// A batch of at least settleFrom paths in a view of a shared index may be
// the start of a branch switch that the watcher delivers over several
// batches, and so is any batch that comes while git holds its index's
// lock (the first files of a checkout may come alone). Git holds that lock
// file for a whole checkout: while <gitdir>/index.lock exists the batches that follow are gathered (polled
// every lockPoll, settleMax at most), and once it is gone, or when git's
// index was written in the last gitRecent, the checkout is complete on
// disk: a walk of the sources adds every file that differs from the view,
// and all is applied as one change at once, so that searches see the old
// checkout or the new one, not a mix. Without git's traces (no git
// directory, no lock, an index not just written), the batches are gathered
// until none came for settleQuiet (settleMax at most).
const (
	settleFrom  = 32
	settleQuiet = 400 * time.Millisecond
	settleMax   = 10 * time.Second
	lockPoll    = 10 * time.Millisecond
	gitRecent   = 2 * time.Second
)

// settleCheckout returns batch with the batches that follow it until the
// change it starts is complete (see settleFrom), and the walk of the
// sources made once git's checkout was over (nil when there was none:
// git left no trace, or the walk failed); false when ctx ended or changes
// was closed. A failed walk of the sources does not end the watch. The
// batches that come while git holds its lock are staged in st as they
// come (see staged): read, and their new content indexed, while git
// writes the rest.
func (ix *Index) settleCheckout(ctx context.Context, batch []string, changes <-chan []string, st *staged) ([]string, map[string]diskFile, bool) {
	gitDir := ix.opts.GitDir
	if gitDir == "" {
		batch, ok := settle(ctx, batch, changes)
		return batch, nil, ok
	}
	lock := filepath.Join(gitDir, "index.lock")
	if !exists(lock) && !writtenSince(filepath.Join(gitDir, "index"), time.Now().Add(-gitRecent)) {
		batch, ok := settle(ctx, batch, changes)
		return batch, nil, ok
	}
	batch, ok := whileExists(ctx, lock, batch, changes, func(paths []string) { ix.stage(st, paths) }, ix.flushStaged)
	if !ok {
		return nil, nil, false
	}
	disk, err := ix.scan(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, false
		}
		// The watch goes on: the paths the batches named are applied.
		ix.log.Warn("search: walk after a checkout failed; applying the changes the watcher named", "err", err)
		return batch, nil, true
	}
	ix.writeMu.Lock()
	batch = append(batch, ix.changedOnDisk(disk)...)
	ix.writeMu.Unlock()
	return batch, disk, true
}

// gitBusy reports whether git holds the lock of the worktree's index: a
// checkout, a commit or a merge is under way.
func (ix *Index) gitBusy() bool {
	return ix.opts.GitDir != "" && exists(filepath.Join(ix.opts.GitDir, "index.lock"))
}

// whileExists returns batch with the batches from changes that come while
// the file lock exists (settleMax at most), each given to stage as it
// comes while the lock exists, batch first, and idle called when the lock
// still exists and no batch came for a lockPoll after one was staged;
// false when ctx ended or changes was closed.
func whileExists(ctx context.Context, lock string, batch []string, changes <-chan []string, stage func([]string), idle func()) ([]string, bool) {
	deadline := time.NewTimer(settleMax)
	defer deadline.Stop()
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	fresh := batch
	staged := false // a batch was staged since the last idle call
	for exists(lock) {
		if len(fresh) > 0 {
			stage(fresh)
			fresh, staged = nil, true
			continue // the lock may have gone meanwhile
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-deadline.C:
			return batch, true
		case <-tick.C:
			if staged && exists(lock) {
				idle()
				staged = false
			}
		case more, ok := <-changes:
			if !ok {
				return nil, false
			}
			batch = append(batch, more...)
			fresh = more
		}
	}
	return batch, true
}

// exists reports whether anything is at path (a link not followed).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writtenSince reports whether the regular file at path was modified
// after t.
func writtenSince(path string, t time.Time) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && fi.ModTime().After(t)
}

// settle returns batch with the batches that follow it until changes has
// been quiet for settleQuiet; false when ctx ended or changes was closed.
func settle(ctx context.Context, batch []string, changes <-chan []string) ([]string, bool) {
	deadline := time.NewTimer(settleMax)
	defer deadline.Stop()
	quiet := time.NewTimer(settleQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false
		case <-deadline.C:
			return batch, true
		case <-quiet.C:
			return batch, true
		case more, ok := <-changes:
			if !ok {
				return nil, false
			}
			batch = append(batch, more...)
			quiet.Reset(settleQuiet)
		}
	}
}
