//go:build unix

package config

import (
	"fmt"
	"os"
	"syscall"
)

// OwnedByMe checks that path (a link's target) belongs to this process's
// user and that no other account may write it. Group write is fine for
// the user's own primary group (the private group most Linux distributions give each
// user, with umask 002).
func OwnedByMe(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", path, st.Uid, os.Getuid())
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 || (perm&0o020 != 0 && int(st.Gid) != os.Getgid()) {
		return fmt.Errorf("%s is writable by other accounts (mode %v)", path, perm)
	}
	return nil
}

// OnlyMeOrRootMayWrite checks that no account but this process's user and
// root may change path: it belongs to the user (as OwnedByMe checks), or
// to root with no group or other write (a system file such as
// /usr/bin/python3, which a project's link may lead to).
func OnlyMeOrRootMayWrite(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 0 && os.Getuid() != 0 {
		if perm := fi.Mode().Perm(); perm&0o022 != 0 {
			return fmt.Errorf("%s is writable by other accounts (mode %v)", path, perm)
		}
		return nil
	}
	return OwnedByMe(path)
}
