package search

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

// The budgets of hostile input (docs/security.md, "Search limits"): what
// refusing or indexing one file, and what one search request, may cost the
// process. Tests assert budgetSlack times each, since machines are noisy.
const (
	fileCPUBudget    = 50 * time.Millisecond
	fileMemBudget    = 20 << 20
	requestCPUBudget = time.Second
	requestMemBudget = 64 << 20
	budgetSlack      = 4
)

// usage is what one piece of work cost the process.
type usage struct {
	cpu  time.Duration // user and system CPU time of the whole process
	peak int64         // growth of the peak resident set (Linux), else bytes allocated
}

// measureUsage runs f and returns what it cost: CPU time of the whole process
// (every goroutine, the garbage collector included) and the growth of its
// peak memory over what it held before f.
func measureUsage(tb testing.TB, f func()) usage {
	tb.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	base := resetPeak(tb)
	c0 := cpuTime(tb)
	f()
	u := usage{cpu: cpuTime(tb) - c0, peak: readPeak(tb) - base}
	return u
}

// measureAlloc runs f and returns what it cost, cheaply enough to run on
// every input of a fuzzer: CPU time of the whole process, and the bytes f
// allocated (which bound the growth of its peak memory).
func measureAlloc(tb testing.TB, f func()) usage {
	tb.Helper()
	a0 := allocatedBytes()
	c0 := cpuTime(tb)
	f()
	return usage{cpu: cpuTime(tb) - c0, peak: allocatedBytes() - a0}
}

func allocatedBytes() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// within fails tb when u is over budgetSlack times the budget (not under
// the race detector, which slows everything several times over).
func (u usage) within(tb testing.TB, what string, cpu time.Duration, mem int64) {
	tb.Helper()
	if raceEnabled {
		return
	}
	if !testing.Verbose() && u.cpu <= budgetSlack*cpu && u.peak <= budgetSlack*mem {
		return
	}
	tb.Logf("%s: %v CPU (budget %v), +%.1f MiB peak (budget %d MiB)", what, u.cpu.Round(time.Millisecond), cpu, float64(u.peak)/(1<<20), mem>>20)
	if u.cpu > budgetSlack*cpu {
		tb.Errorf("%s took %v of CPU, over %d x its budget of %v", what, u.cpu, budgetSlack, cpu)
	}
	if u.peak > budgetSlack*mem {
		tb.Errorf("%s grew the peak memory by %.1f MiB, over %d x its budget of %d MiB", what, float64(u.peak)/(1<<20), budgetSlack, mem>>20)
	}
}

func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
