//go:build linux

package lambdaproc

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// limitOS sets RLIMIT_AS at the address space the process has now plus
// memory (the Go runtime reserves its address space at start, so a fixed
// limit would be below what it already holds), and RLIMIT_CPU.
func limitOS(memory int64, cpuSeconds int) error {
	if raceBuild {
		return setCPU(cpuSeconds)
	}
	size, err := vmSize()
	if err != nil {
		return err
	}
	as := uint64(size + memory)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return err
	}
	return setCPU(cpuSeconds)
}

// vmSize reads the process's address space size from /proc.
func vmSize() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, sc.Err()
}

// setProcAttr kills the child when the broker dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
