//go:build linux || darwin

package hosted

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity changes whenever the file is replaced or written: its
// device, inode, size, and modification and change times (the change
// time cannot be set back by a program).
func fileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprint(st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano(), changeTime(st))
}
