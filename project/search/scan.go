package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// diskFile is a source file as seen by a walk.
type diskFile struct {
	size  int64
	mtime int64
	skip  string // skipOutside for a link the policy does not follow (size and mtime are the link's)
}

// scan walks the sources and returns every indexable file with its size and
// modification time. Missing source folders are empty, not errors; folders
// that cannot be read are logged and skipped. Symlinks are followed only
// where [Options.Links] allows: a source folder reached through links that
// lead elsewhere is skipped whole, a file is listed as skipped.
func (ix *Index) scan(ctx context.Context) (map[string]diskFile, error) {
	out := make(map[string]diskFile)
	for _, src := range ix.opts.Sources {
		if err := ix.scanDir(ctx, src, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanDir walks one folder (relative to the root) into out.
func (ix *Index) scanDir(ctx context.Context, dir string, out map[string]diskFile) error {
	// A trailing separator makes the walk follow a symlinked source folder.
	top := filepath.Join(ix.opts.Root, filepath.FromSlash(dir)) + string(filepath.Separator)
	if fi, err := os.Stat(top); err != nil || !fi.IsDir() {
		ix.outside.drop(dir)
		return nil
	}
	// Below the top, the walk follows no folder link: a file's real path
	// is inside the top's, unless the file itself is a link.
	if _, outside := ix.resolve(top); outside != nil {
		ix.reportOutside(dir, outside)
		return nil
	}
	ix.outside.drop(dir)
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if p != top {
				ix.log.Warn("search: cannot read folder; skipping it", "path", p, "err", err)
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, relErr := filepath.Rel(ix.opts.Root, p)
		if relErr != nil {
			return nil
		}
		rel, ok := cleanRel(rel)
		if !ok {
			return nil
		}
		if d.IsDir() {
			if p != top && skipName(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !ix.opts.indexable(rel) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if _, outside := ix.resolve(p); outside != nil {
				ix.reportOutside(rel, outside)
				if li, err := d.Info(); err == nil {
					out[rel] = diskFile{size: li.Size(), mtime: li.ModTime().UnixNano(), skip: skipOutside}
				}
				return nil
			}
			ix.outside.drop(rel)
		}
		fi, err := os.Stat(p) // follows a symlinked file
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				ix.log.Warn("search: cannot stat file; skipping it", "path", rel, "err", err)
			}
			return nil
		}
		if fi.Mode().IsRegular() {
			out[rel] = diskFile{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		}
		return nil
	})
}
