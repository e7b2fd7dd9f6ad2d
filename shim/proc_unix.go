//go:build unix

package shim

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// pidAlive reports whether pid is a running process (a zombie, exited but
// not yet reaped, counts as gone where /proc shows it).
func pidAlive(pid int) bool {
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
