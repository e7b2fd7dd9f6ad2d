package hosted

import "syscall"

// procAttr puts the server in its own process group (so stopping it kills
// what it started too) and has the kernel SIGKILL it when the broker dies,
// even by kill -9. Pdeathsig follows the thread that started the child; Go
// only ends threads of goroutines that exit while locked to them, which
// the broker does not do.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
