package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/berth-dev/berth/project/links"
)

// skipOutside is the skip reason of a file whose symlinks lead outside
// the project (see [Options.Links]).
const skipOutside = "link leads outside the project (see rag.allow_outside)"

// maxWarnings caps the warnings [Status] lists.
const maxWarnings = 50

// resolve applies the link policy to a path the index would read: it
// returns the real path to read, or the error naming where its links lead
// when that is outside the project. real is "" when abs cannot be
// resolved (missing, a dangling link): reading abs then fails the usual
// way.
func (ix *Index) resolve(abs string) (real string, outside *links.OutsideError) {
	real, err := ix.opts.Links.Resolve(abs)
	var oe *links.OutsideError
	if errors.As(err, &oe) {
		return "", oe
	}
	if err != nil {
		return "", nil
	}
	return real, nil
}

// source reads files the policy admitted (real) through it, so that a
// link swapped into the path after resolve cannot lead elsewhere; a path
// that did not resolve is read as is, to fail the usual way.
type source struct {
	links     *links.Policy
	abs, real string
}

func (s source) stat() (fs.FileInfo, error) {
	if s.real == "" {
		return os.Stat(s.abs)
	}
	return s.links.Stat(s.real)
}

func (s source) read() ([]byte, error) {
	if s.real == "" {
		return os.ReadFile(s.abs)
	}
	return s.links.ReadFile(s.real)
}

// reportOutside lists rel in the status as not indexed for leading to
// oe.Target, and logs it the first time.
func (ix *Index) reportOutside(rel string, oe *links.OutsideError) {
	msg := fmt.Sprintf("%s is not indexed: it is a link to %s, outside the project (to index it, add that folder to rag.allow_outside)", rel, oe.Target)
	if ix.outside.set(rel, msg) {
		ix.log.Warn("search: link leads outside the project; not indexed", "path", rel, "target", oe.Target,
			"fix", "add its folder to rag.allow_outside")
	}
}

// readOutside is readUpdate's answer for a file whose links lead outside:
// a link of its own is recorded as skipped (and reported); a file reached
// through a linked folder is left out, the folder being what the scan
// reports.
func (ix *Index) readOutside(u fileUpdate, abs string, old *fileEntry, oe *links.OutsideError) fileUpdate {
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		ix.reportOutside(u.rel, oe)
		return skipLink(u, fi, old)
	}
	ix.outside.drop(u.rel)
	u.reindex = old != nil
	return u
}

// skipLink records a link whose target lies outside as skipped, with the
// link's own size and modification time (fi); the target is never read.
func skipLink(u fileUpdate, fi fs.FileInfo, old *fileEntry) fileUpdate {
	u.entry = &fileEntry{size: fi.Size(), mtime: fi.ModTime().UnixNano(), skip: skipOutside}
	u.reindex = old == nil || old.skip != skipOutside || len(old.chunks) > 0
	return u
}

// changed reports whether the stored entry old no longer describes the
// file df found on disk; a change of the link policy's verdict counts.
func (df diskFile) changed(old *fileEntry) bool {
	if old == nil || old.size != df.size || old.mtime != df.mtime {
		return true
	}
	return (df.skip == skipOutside) != (old.skip == skipOutside)
}

// outsideReport keeps the paths skipped for leading outside the project,
// for [Status.Warnings]. Readers of a bulk build call it in parallel.
type outsideReport struct {
	mu    sync.Mutex
	paths map[string]string // rel -> warning
}

// set records rel's warning and reports whether it is new.
func (r *outsideReport) set(rel, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paths == nil {
		r.paths = make(map[string]string)
	}
	if r.paths[rel] == msg {
		return false
	}
	r.paths[rel] = msg
	return true
}

func (r *outsideReport) drop(rel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.paths, rel)
}

// list returns the warnings sorted by path, at most maxWarnings of them
// and then a line counting the rest.
func (r *outsideReport) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	rels := make([]string, 0, len(r.paths))
	for rel := range r.paths {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	out := make([]string, 0, min(len(rels), maxWarnings+1))
	for i, rel := range rels {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("and %d more links leading outside the project", len(rels)-maxWarnings))
			break
		}
		out = append(out, r.paths[rel])
	}
	return out
}
