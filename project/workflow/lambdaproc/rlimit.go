package lambdaproc

import (
	"os"
	"syscall"
)

// setCPU sets RLIMIT_CPU: SIGXCPU at seconds (the child exits on it), a
// kill one second later.
func setCPU(seconds int) error {
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(seconds), Max: uint64(seconds) + 1})
}

// maxRSS is a finished child's peak resident size in bytes.
func maxRSS(st *os.ProcessState) int64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return int64(ru.Maxrss) * rssUnit
}
