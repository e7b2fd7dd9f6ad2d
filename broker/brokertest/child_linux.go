package brokertest

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes cmd, a child of the test process, receive SIGKILL when
// the test process ends, whichever way it ends: a `go test -timeout` kill
// runs no cleanups, and a broker it started would otherwise keep running.
// Processes the child starts itself (a broker a shim auto-starts) are not
// covered.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
