//go:build unix

package main

import (
	"os"
	"syscall"
)

// ownedByMe reports the file's owner and whether it is this user.
func ownedByMe(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, true
	}
	return int(st.Uid), int(st.Uid) == os.Getuid()
}
