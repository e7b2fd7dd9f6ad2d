package brokertest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Usage is what a process has used so far: CPU (user and system, every
// thread), resident memory now and its peak since the last ResetPeak.
type Usage struct {
	CPU  time.Duration
	RSS  int64 // VmRSS, bytes
	Peak int64 // VmHWM, bytes
	Size int64 // VmSize (address space), bytes
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// every Linux that Go supports).
const clockTick = 10 * time.Millisecond

// ProcUsage reads pid's Usage from /proc/PID/stat and /proc/PID/status.
func ProcUsage(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// utime and stime are the 12th and 13th fields after it.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	for _, f := range fields[11:13] {
		ticks, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		u.CPU += time.Duration(ticks) * clockTick
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &u.RSS
		case "VmHWM":
			dst = &u.Peak
		case "VmSize":
			dst = &u.Size
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status %s: %w", pid, name, err)
		}
		*dst = kb << 10
	}
	return u, nil
}

// ResetPeak sets pid's peak resident memory (VmHWM) back to what it holds
// now, so that the next ProcUsage's Peak is the peak since this call.
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// LimitAddressSpace caps pid's address space (RLIMIT_AS) at what it maps
// now plus headroom: an allocation past it fails, and the Go runtime of
// the process dies of it, so that a test of a regression fails instead of
// taking the machine's memory. The processes pid starts afterwards
// inherit the cap. It returns the cap.
func LimitAddressSpace(tb testing.TB, pid int, headroom int64) int64 {
	tb.Helper()
	u, err := ProcUsage(pid)
	if err != nil {
		tb.Fatal(err)
	}
	LimitAddressSpaceTo(tb, pid, u.Size+headroom)
	return u.Size + headroom
}

// LimitAddressSpaceTo caps pid's address space at limit bytes. Under the
// race detector, which maps terabytes of shadow memory, nothing is capped.
func LimitAddressSpaceTo(tb testing.TB, pid int, limit int64) {
	tb.Helper()
	if os.Getenv("BERTH_TEST_RACE") != "" {
		tb.Logf("pid %d runs with no address-space limit (race detector)", pid)
		return
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}, nil); err != nil {
		tb.Fatalf("limit the address space of pid %d: %v", pid, err)
	}
}
