//go:build !unix

package search

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// statIn returns the size and mtime of each named file of folder dir,
// following links; a file that is gone or not regular is marked skipGone,
// and an error other than its absence is also passed to warn.
func statIn(dir string, names []string, warn func(name string, err error)) []diskFile {
	out := make([]diskFile, len(names))
	for i, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err != nil:
			out[i].skip = skipGone
			if !errors.Is(err, fs.ErrNotExist) {
				warn(name, err)
			}
		case !fi.Mode().IsRegular():
			out[i].skip = skipGone
		default:
			out[i] = diskFile{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		}
	}
	return out
}
