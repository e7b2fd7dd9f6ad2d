//go:build unix

package gitrepo

import (
	"fmt"
	"os"
	"syscall"
)

// ownerOf is the account that owns path.
func ownerOf(path string) (uint32, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("stat %s: no owner", path)
	}
	return st.Uid, nil
}

// openRegular opens path for reading only when it is a regular file: a
// FIFO or device a checkout put in place of a git file would block the
// read or never end.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
