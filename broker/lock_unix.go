//go:build unix

package broker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrAlreadyRunning reports that another broker holds the home's lock.
var ErrAlreadyRunning = errors.New("broker already running")

// acquireLock takes an exclusive, non-blocking flock on path and writes our
// pid into it. The lock lives as long as the returned file stays open; the
// kernel drops it if the process dies, so a stale lock file is harmless.
func acquireLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		raw, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			return nil, fmt.Errorf("%w (pid %d): stop it with `kill %d` or use another BERTH_HOME", ErrAlreadyRunning, pid, pid)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
