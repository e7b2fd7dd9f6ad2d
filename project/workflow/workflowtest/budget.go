package workflowtest

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Budget is what handling one input may cost the process: CPU time and
// growth of its peak resident memory.
type Budget struct {
	CPU    time.Duration
	Memory int64
}

// The budgets of hostile inputs: refusing (or processing) a file or a
// value, and serving a whole request. Tests allow Slack times each, since
// machines are noisy.
var (
	Refusal = Budget{CPU: 50 * time.Millisecond, Memory: 20 << 20}
	Request = Budget{CPU: time.Second, Memory: 64 << 20}
)

// Slack is how far over its budget a test lets an input go (more in the
// race detector's builds).
const Slack = 4 * RaceSlack

// Cost is what one call cost.
type Cost struct {
	CPU time.Duration
	// Peak is how far the process's peak resident size (VmHWM, reset
	// before the call) rose above its resident size before the call; on
	// systems without /proc, the bytes the Go heap allocated during it.
	Peak int64
}

// Measure runs fn and returns its cost. Do not run it beside parallel tests.
func Measure(fn func()) Cost {
	runtime.GC()
	debug.FreeOSMemory()
	rss, procOK := procStatus("VmRSS")
	procOK = procOK && os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	fn()
	c := Cost{CPU: cpuTime() - cpu0}
	if hwm, ok := procStatus("VmHWM"); procOK && ok {
		c.Peak = max(0, hwm-rss)
	} else {
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		c.Peak = int64(after.TotalAlloc - before.TotalAlloc)
	}
	return c
}

// MeasureQuick runs fn and returns its CPU time and, as Peak, the bytes the
// Go heap allocated during it (more than its peak growth): cheap enough to
// run on every input of a fuzz target.
func MeasureQuick(fn func()) Cost {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	cpu0 := cpuTime()
	fn()
	c := Cost{CPU: cpuTime() - cpu0}
	metrics.Read(s)
	c.Peak = int64(s[0].Value.Uint64() - before)
	return c
}

// Check fails tb when c is over Slack times b.
func (b Budget) Check(tb testing.TB, what string, c Cost) {
	tb.Helper()
	tb.Logf("%s: %v of CPU, %.1f MiB", what, c.CPU.Round(time.Millisecond), float64(c.Peak)/(1<<20))
	if c.CPU > Slack*b.CPU || c.Peak > Slack*b.Memory {
		tb.Errorf("%s cost %v of CPU and %d MiB of memory; the budget is %v and %d MiB (%dx allowed)",
			what, c.CPU, c.Peak>>20, b.CPU, b.Memory>>20, Slack)
	}
}

// cpuTime is the process's user and system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus reads a size field (in kB) of /proc/self/status, in bytes.
func procStatus(field string) (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	i := bytes.Index(data, []byte(field+":"))
	if i < 0 {
		return 0, false
	}
	line := data[i+len(field)+1:]
	if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	return kb << 10, err == nil
}
