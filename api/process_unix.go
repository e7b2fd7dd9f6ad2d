//go:build unix

package api

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// ProcessAlive reports whether pid is a running process: how a reader of a
// state file's or the lock file's pid tells a live broker from a stale
// record, and how the broker tells a live shim. A zombie (exited, not yet
// reaped) counts as gone where /proc shows it; a process of another user
// counts as alive.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses, which may hold spaces.
	if i := strings.LastIndexByte(string(raw), ')'); i >= 0 {
		if f := strings.Fields(string(raw[i+1:])); len(f) > 0 && f[0] == "Z" {
			return false
		}
	}
	return true
}
