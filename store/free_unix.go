//go:build unix

package store

import "syscall"

// freeBytes is the room left for this account on the disk that holds
// dir, or -1 when the system does not say.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
