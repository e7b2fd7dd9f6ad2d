package search

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/berth-dev/berth/project/procs"
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
	st := ix.startStats(ctx)
	var err error
	for _, src := range ix.opts.Sources {
		if err = ix.scanDir(ctx, src, out, st.add); err != nil {
			break
		}
	}
	out, ferr := st.finish(out)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanDir walks one folder (relative to the root) into out; the regular
// files it finds are passed to add (by folder, name, and path relative to
// the root), for their sizes and mtimes to be read apart.
func (ix *Index) scanDir(ctx context.Context, dir string, out map[string]diskFile, add func(dir, name, rel string)) error {
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
	rootSep := ix.opts.Root + string(filepath.Separator)
	abs := filepath.Clean(top)
	rel, ok := relTo(ix.opts.Root, rootSep, top)
	switch {
	case abs == ix.opts.Root:
		rel = "" // the root's files are their names
	case !ok:
		return nil // outside the root
	}
	return ix.walkFolder(ctx, abs, rel, true, out, add)
}

// walkFolder walks folder abs (rel relative to the root, in the index's
// form; "" for the root) and the folders below it, as filepath.WalkDir
// would without sorting each folder's names or cleaning each path it
// makes: a file's path is its folder's, a separator and its name. It
// follows no folder link; a linked file is resolved by the link policy.
// A folder that cannot be read is skipped, and logged unless it is the
// top one (a source folder that went away).
func (ix *Index) walkFolder(ctx context.Context, abs, rel string, top bool, out map[string]diskFile, add func(dir, name, rel string)) error {
	f, err := os.Open(abs)
	var entries []fs.DirEntry
	if err == nil {
		entries, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if !top {
			ix.log.Warn("search: cannot read folder; skipping it", "path", abs, "err", err)
		}
		return nil
	}
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		p, r := abs+string(filepath.Separator)+name, name
		if rel != "" {
			r = rel + "/" + name
		}
		if d.IsDir() {
			if !skipName(name) {
				if err := ix.walkFolder(ctx, p, r, false, out, add); err != nil {
					return err
				}
			}
			continue
		}
		if !ix.opts.indexable(r) {
			continue
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if _, outside := ix.resolve(p); outside != nil {
				ix.reportOutside(r, outside)
				if li, err := d.Info(); err == nil {
					out[r] = diskFile{size: li.Size(), mtime: li.ModTime().UnixNano(), skip: skipOutside}
				}
				continue
			}
			ix.outside.drop(r)
		}
		if d.Type().IsRegular() {
			add(abs, name, r)
			continue
		}
		fi, err := os.Stat(p) // follows a symlinked file
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				ix.log.Warn("search: cannot stat file; skipping it", "path", r, "err", err)
			}
			continue
		}
		if fi.Mode().IsRegular() {
			out[r] = diskFile{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		}
	}
	return nil
}

// relTo returns walk path p relative to root (rootSep is root and a
// separator) in the index's form, or false when it is outside. The path of
// a walk below the root is cut, not computed by filepath.Rel.
func relTo(root, rootSep, p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, rootSep); ok {
		return cleanRel(rest)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return "", false
	}
	return cleanRel(rel)
}

// statGroup is some of one folder's files whose size and mtime a walk
// needs. A walk visits a folder's files around its subfolders' walks, and
// cuts a large folder into groups of statBatch, so a folder may have
// several groups.
type statGroup struct {
	dir   string // absolute
	names []string
	rels  []string
	found []diskFile // statIn's answer, one a name
}

// statBatch is the most files of a statGroup.
const statBatch = 256

// stats reads the sizes and mtimes of the files a walk finds while it
// walks on: its groups are stated on a goroutine per processor, each file
// relative to its open folder (statIn) so that the kernel does not resolve
// the whole path again for every file. One walk owns it.
type stats struct {
	ctx    context.Context
	ix     *Index
	cur    statGroup // the group being filled
	groups []*statGroup
	work   chan *statGroup
	wg     sync.WaitGroup
	done   func() // the workers' hold on the processors (procs.Workers)
}

func (ix *Index) startStats(ctx context.Context) *stats {
	workers, done := procs.Workers(math.MaxInt)
	st := &stats{ctx: ctx, ix: ix, work: make(chan *statGroup, 2*workers), done: done}
	for range workers {
		st.wg.Go(func() {
			for g := range st.work {
				if ctx.Err() != nil {
					continue
				}
				g.found = statIn(g.dir, g.names, func(name string, err error) {
					ix.log.Warn("search: cannot stat file; skipping it", "path", filepath.Join(g.dir, name), "err", err)
				})
			}
		})
	}
	return st
}

// add queues file name of folder dir, rel to the root.
func (st *stats) add(dir, name, rel string) {
	if st.cur.dir != dir || len(st.cur.names) == statBatch {
		st.flush()
		st.cur.dir = dir
	}
	st.cur.names = append(st.cur.names, name)
	st.cur.rels = append(st.cur.rels, rel)
}

// flush hands the group being filled to the workers.
func (st *stats) flush() {
	if len(st.cur.names) > 0 {
		g := &statGroup{dir: st.cur.dir, names: st.cur.names, rels: st.cur.rels}
		st.groups = append(st.groups, g)
		st.work <- g
	}
	st.cur = statGroup{}
}

// finish waits for the workers and returns out with what they found
// added, in a map sized once; a file gone since the walk listed it is
// left out.
func (st *stats) finish(out map[string]diskFile) (map[string]diskFile, error) {
	st.flush()
	close(st.work)
	st.wg.Wait()
	st.done()
	if err := st.ctx.Err(); err != nil {
		return nil, err
	}
	n := len(out)
	for _, g := range st.groups {
		n += len(g.names)
	}
	all := make(map[string]diskFile, n)
	maps.Copy(all, out)
	for _, g := range st.groups {
		for j, df := range g.found {
			if df.skip != skipGone {
				all[g.rels[j]] = df
			}
		}
	}
	return all, nil
}

// skipGone marks, in statIn's answer, a file that is not there (or not a
// regular file) any more; it never reaches the index.
const skipGone = "gone"
