//go:build unix

package broker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// acquireLock takes an exclusive, non-blocking flock on path and writes our
// pid into it. The lock lives as long as the returned file stays open; the
// kernel drops it if the process dies, so a stale lock file is harmless.
func acquireLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := lockPID(path)
			return nil, &RunningError{PID: pid, Detail: ": stop it with `berth stop` or use another BERTH_HOME"}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// lockPID reads the pid the lock holder wrote. A holder that has just taken
// the lock may not have written it yet: a few short retries (bounded, 100 ms
// in all) let the message name it.
func lockPID(path string) int {
	for range 10 {
		raw, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// LockHolder reports whether a process holds the broker lock at path, and
// the pid it wrote. It probes with a shared, non-blocking lock that it
// drops at once; a missing lock file means nobody holds it.
func LockHolder(path string) (held bool, pid int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("open lock %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, lockPID(path), nil
		}
		return false, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, 0, nil
}
