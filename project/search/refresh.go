package search

import (
	"context"
	"slices"
)

// batchFiles is how many files one incremental commit takes during a
// catch-up; progress is reported after each.
const batchFiles = 256

// refresh brings the index up to date with the files on disk, given a walk
// of the sources (stat only, see scan): it reads just the files whose size or mtime differ
// from the stored entry, and drops entries whose file is gone. Many changes
// (a first build, a rebuild, a big checkout) take the bulk path; a few take
// incremental commits.
func (ix *Index) refresh(ctx context.Context, disk map[string]diskFile) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	w := &ix.w
	changed := ix.changedOnDisk(disk)
	ix.setProgress(0, len(changed))
	if w.dirty || len(changed) > max(batchFiles, len(w.files)/4) {
		return ix.rebuildAll(ctx, disk)
	}
	return ix.inBatches(ctx, changed, func(batch []string) error {
		ups := make([]fileUpdate, 0, len(batch))
		for _, rel := range batch {
			ups = append(ups, ix.readUpdate(rel, w.files[rel], false))
		}
		return ix.commit(ups)
	})
}

// changedOnDisk lists, sorted, the paths whose file differs from its entry
// in a walk of the sources, or is gone. The caller holds writeMu.
func (ix *Index) changedOnDisk(disk map[string]diskFile) []string {
	var changed []string
	for rel, df := range disk {
		if df.changed(ix.w.files[rel]) {
			changed = append(changed, rel)
		}
	}
	for rel := range ix.w.files {
		if _, ok := disk[rel]; !ok {
			changed = append(changed, rel)
		}
	}
	slices.Sort(changed)
	return changed
}

// inBatches commits paths batchFiles at a time with commit, reporting
// progress after each. The caller holds writeMu.
func (ix *Index) inBatches(ctx context.Context, paths []string, commit func(batch []string) error) error {
	return ix.inBatchesAfter(ctx, 0, len(paths), paths, commit)
}

// inBatchesAfter is inBatches for the last paths of total files, of
// which done are committed already.
func (ix *Index) inBatchesAfter(ctx context.Context, done, total int, paths []string, commit func(batch []string) error) error {
	for i := 0; i < len(paths); i += batchFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ix.opts.beforeBatch != nil {
			ix.opts.beforeBatch()
		}
		batch := paths[i:min(i+batchFiles, len(paths))]
		if err := commit(batch); err != nil {
			return err
		}
		ix.setProgress(done+i+len(batch), total)
	}
	return nil
}
