package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// diskFile is a source file as seen by a walk.
type diskFile struct {
	size  int64
	mtime int64
	skip  string // skipOutside for a link the policy does not follow (size and mtime are the link's)
	// ctime and ino, when the walk stat'ed the file in its folder (else
	// 0), let git's index vouch for it (see gitIndex.unchanged).
	ctime int64
	ino   uint64
}

// scan walks the sources and returns every indexable file with its size and
// modification time. Missing source folders are empty, not errors; folders
// that cannot be read are logged and skipped. Symlinks are followed only
// where [Options.Links] allows: a source folder reached through links that
// lead elsewhere is skipped whole, a file is listed as skipped.
func (ix *Index) scan(ctx context.Context) (map[string]diskFile, error) {
	out := make(map[string]diskFile)
	var pending []statGroup
	for _, src := range ix.opts.Sources {
		if err := ix.scanDir(ctx, src, out, &pending); err != nil {
			return nil, err
		}
	}
	if err := ix.statGroups(ctx, pending, out); err != nil {
		return nil, err
	}
	return out, nil
}

// scanDir walks one folder (relative to the root) into out; the regular
// files it finds are added to pending, stated later by statGroups.
func (ix *Index) scanDir(ctx context.Context, dir string, out map[string]diskFile, pending *[]statGroup) error {
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
		if d.Type().IsRegular() {
			addPending(pending, filepath.Dir(p), d.Name(), rel)
			return nil
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

// statGroup is one folder's files whose size and mtime a walk still needs.
// A walk visits a folder's files around its subfolders' walks, so a folder
// may have several groups.
type statGroup struct {
	dir   string // absolute
	names []string
	rels  []string
}

func addPending(pending *[]statGroup, dir, name, rel string) {
	g := *pending
	if len(g) == 0 || g[len(g)-1].dir != dir {
		g = append(g, statGroup{dir: dir})
	}
	last := &g[len(g)-1]
	last.names = append(last.names, name)
	last.rels = append(last.rels, rel)
	*pending = g
}

// statWorkers bounds the goroutines that stat a walk's files.
const statWorkers = 4

// statGroups stats the pending files into out, a few folders at a time in
// parallel, each file relative to its open folder (statIn) so that the
// kernel does not resolve the whole path again for every file. A file gone
// since the walk listed it is left out.
func (ix *Index) statGroups(ctx context.Context, groups []statGroup, out map[string]diskFile) error {
	found := make([][]diskFile, len(groups))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(statWorkers, runtime.GOMAXPROCS(0), len(groups)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(groups) || ctx.Err() != nil {
					return
				}
				found[i] = statIn(groups[i].dir, groups[i].names, func(name string, err error) {
					ix.log.Warn("search: cannot stat file; skipping it", "path", filepath.Join(groups[i].dir, name), "err", err)
				})
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, g := range groups {
		for j, df := range found[i] {
			if df.skip != skipGone {
				out[g.rels[j]] = df
			}
		}
	}
	return nil
}

// skipGone marks, in statIn's answer, a file that is not there (or not a
// regular file) any more; it never reaches the index.
const skipGone = "gone"
