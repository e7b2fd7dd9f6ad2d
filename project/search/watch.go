package search

import "context"

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
