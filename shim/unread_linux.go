//go:build linux

package shim

import (
	"os"
	"syscall"
	"unsafe"
)

// unreadOf returns a function counting the bytes written to f that its
// reader has not read yet, or nil when the OS cannot tell for f. Linux
// tells for a pipe (FIONREAD counts the bytes in it, from either end)
// and for a Unix socket, the stdout Node.js gives its children (libuv
// makes a socketpair): TIOCOUTQ counts what the peer has not read.
func unreadOf(f *os.File) func() (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var req uintptr
	if err := rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFIFO:
			req = syscall.TIOCINQ // FIONREAD
		case syscall.S_IFSOCK:
			req = syscall.TIOCOUTQ // SIOCOUTQ
		}
	}); err != nil || req == 0 {
		return nil
	}
	return func() (int, error) {
		var n int32
		var errno syscall.Errno
		err := rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(&n)))
		})
		if err != nil {
			return 0, err
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}
