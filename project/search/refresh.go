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
	var changed []string
	for rel, df := range disk {
		if df.changed(w.files[rel]) {
			changed = append(changed, rel)
		}
	}
	for rel := range w.files {
		if _, ok := disk[rel]; !ok {
			changed = append(changed, rel)
		}
	}
	slices.Sort(changed)
	ix.setProgress(0, len(changed))
	if w.dirty || len(changed) > max(batchFiles, len(w.files)/4) {
		return ix.rebuildAll(ctx, disk)
	}
	for i := 0; i < len(changed); i += batchFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ix.opts.beforeBatch != nil {
			ix.opts.beforeBatch()
		}
		batch := changed[i:min(i+batchFiles, len(changed))]
		ups := make([]fileUpdate, 0, len(batch))
		for _, rel := range batch {
			ups = append(ups, ix.readUpdate(rel, w.files[rel], false))
		}
		if err := ix.commit(ups); err != nil {
			return err
		}
		ix.setProgress(i+len(batch), len(changed))
	}
	return nil
}
