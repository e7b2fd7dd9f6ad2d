package search

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// expand turns changed paths (files or folders, relative to the root) into
// the sorted list of file paths to bring up to date: indexable files named
// directly, files the index holds under a named folder, and files on disk
// under a named folder. disk, when not nil, is a walk of the sources made
// after the change (see settleCheckout): a path it found as a regular file
// is no folder, and is not stat'ed again. The caller holds writeMu.
func (ix *Index) expand(changed []string, disk map[string]diskFile) []string {
	set := make(map[string]struct{})
	var known []string // the index's files, sorted, to find a folder's
	for _, p := range changed {
		rel, ok := cleanRel(p)
		if !ok {
			continue
		}
		underSource := ix.opts.sourceOf(rel) != ""
		var inner []string // sources inside rel
		for _, s := range ix.opts.Sources {
			if s != rel && strings.HasPrefix(s, rel+"/") {
				inner = append(inner, s)
			}
		}
		if !underSource && len(inner) == 0 {
			continue
		}
		if _, seen := set[rel]; seen {
			continue // named twice: by the watcher and by the walk
		}
		if ix.opts.indexable(rel) {
			set[rel] = struct{}{}
		}
		if known == nil {
			known = slices.Sorted(maps.Keys(ix.w.files))
		}
		prefix := rel + "/"
		i, _ := slices.BinarySearch(known, prefix)
		for ; i < len(known) && strings.HasPrefix(known[i], prefix); i++ {
			set[known[i]] = struct{}{}
		}
		if df, ok := disk[rel]; ok && df.skip == "" {
			continue
		}
		fi, err := os.Stat(filepath.Join(ix.opts.Root, filepath.FromSlash(rel)))
		if err != nil || !fi.IsDir() {
			continue
		}
		found := make(map[string]diskFile)
		dirs := inner
		if underSource {
			dirs = []string{rel}
		}
		// The regular files are not stated: only their names count here.
		listed := func(_, _, rel string) { set[rel] = struct{}{} }
		for _, d := range dirs {
			_ = ix.scanDir(context.Background(), d, found, listed)
		}
		for f := range found {
			set[f] = struct{}{}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
