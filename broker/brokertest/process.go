package brokertest

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/shirou/gopsutil/v4/process"
)

// Alive reports whether pid is a running process (api.ProcessAlive: a
// zombie counts as gone).
func Alive(pid int) bool { return api.ProcessAlive(pid) }

// Reaped reports whether pid is gone from the process table (exited and
// waited for), not merely a zombie.
func Reaped(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// WaitGone polls until pid no longer runs, for at most d.
func WaitGone(pid int, d time.Duration) bool { return Poll(d, func() bool { return !Alive(pid) }) }

// KillPID sends SIGKILL to pid (a process a test started, or one that a
// process under test started); pid <= 0 is ignored.
func KillPID(pid int) {
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// WaitExit waits up to d for cmd to exit, then kills it; it returns the
// exit error, or an error saying it was still running.
func WaitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after %s", d)
	}
}

// Processes lists the live processes (zombies excluded) for which match,
// given the executable's path and the process's BERTH_HOME, is true.
// Processes another user owns, or that exit meanwhile, are skipped.
func Processes(tb testing.TB, match func(exe, home string) bool) []int32 {
	tb.Helper()
	procs, err := process.Processes()
	if err != nil {
		tb.Fatal(err)
	}
	var out []int32
	for _, p := range procs {
		env, err := p.Environ()
		if err != nil {
			continue
		}
		home := ""
		for _, kv := range env {
			if h, ok := strings.CutPrefix(kv, "BERTH_HOME="); ok {
				home = h
			}
		}
		if home == "" {
			continue
		}
		exe, _ := p.Exe()
		if !match(exe, home) {
			continue
		}
		if st, err := p.Status(); err == nil && len(st) > 0 && st[0] == process.Zombie {
			continue
		}
		out = append(out, p.Pid)
	}
	return out
}

// BrokerProcesses lists the live `berth` processes whose BERTH_HOME is home.
func BrokerProcesses(tb testing.TB, home string) []int32 {
	tb.Helper()
	return Processes(tb, func(exe, h string) bool { return filepath.Base(exe) == "berth" && h == home })
}
