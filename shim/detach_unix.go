//go:build unix

package shim

import "syscall"

// detached puts the broker in its own session so the IDE closing the shim's
// terminal or process group does not take the broker with it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
