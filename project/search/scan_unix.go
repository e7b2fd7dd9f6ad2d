//go:build unix

package search

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// statIn returns the size, mtime, ctime and inode of each named file of
// folder dir, following links; a file that is gone or not regular is
// marked skipGone, and an error other than its absence is also passed to
// warn.
func statIn(dir string, names []string, warn func(name string, err error)) []diskFile {
	out := make([]diskFile, len(names))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		for i, name := range names {
			out[i].skip = skipGone
			if !errors.Is(err, fs.ErrNotExist) {
				warn(name, err)
			}
		}
		return out
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	for i, name := range names {
		err := unix.Fstatat(fd, name, &st, 0)
		for errors.Is(err, unix.EINTR) {
			err = unix.Fstatat(fd, name, &st, 0)
		}
		switch {
		case err != nil:
			out[i].skip = skipGone
			if !errors.Is(err, fs.ErrNotExist) {
				warn(name, err)
			}
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			out[i].skip = skipGone
		default:
			out[i] = diskFile{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino)}
		}
	}
	return out
}
