package search

import (
	"context"
	"time"
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
			ix := current()
			if ix == nil {
				continue
			}
			if ix.opts.Shared != nil && len(batch) >= settleFrom {
				batch, ok = settle(ctx, batch, changes)
				if !ok {
					return
				}
			}
			if err := ix.Apply(ctx, batch); err != nil && ctx.Err() == nil {
				if errIsClosed(err) {
					if current() == ix {
						return
					}
					continue // replaced meanwhile
				}
				ix.log.Warn("search: cannot apply file changes", "paths", len(batch), "err", err)
			}
		}
	}
}

// A batch of at least settleFrom paths in a view of a shared index may be
// the start of a branch switch that the watcher delivers over several
// batches: the batches that follow are gathered until none came for
// settleQuiet (settleMax at most), then applied as one change, so that
// searches see the old checkout or the new one, not a mix.
const (
	settleFrom  = 32
	settleQuiet = 400 * time.Millisecond
	settleMax   = 10 * time.Second
)

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
