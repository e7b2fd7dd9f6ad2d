// Package budgettest holds what one hostile input may cost Berth (the
// budgets docs/security.md states) and measures what a call costs, for
// the fuzz targets of the readers and parsers and for the system test of
// hostile repositories and requests.
package budgettest

import (
	"fmt"
	"runtime/metrics"
	"time"
)

// Budget is what handling one input may cost: CPU time, and memory (peak
// RSS growth of the broker, or bytes allocated by an in-process call,
// which bounds its heap growth from above).
type Budget struct {
	CPU    time.Duration
	Memory int64
}

// The budgets of one input.
var (
	// Refusal is refusing a config file or a repository file.
	Refusal = Budget{CPU: 50 * time.Millisecond, Memory: 20 << 20}
	// Request is answering one request (an error or a bounded result).
	Request = Budget{CPU: time.Second, Memory: 64 << 20}
)

// Slack is how many times its budget a test lets an input cost: machines
// are noisy, and a regression is far past it. The race detector's builds
// run several times slower (RaceSlowdown).
const Slack = 4 * RaceSlowdown

// Cost is what a call cost.
type Cost struct {
	CPU    time.Duration
	Memory int64
}

func (c Cost) String() string {
	return fmt.Sprintf("%s CPU, %.1f MiB", c.CPU.Round(time.Millisecond), float64(c.Memory)/(1<<20))
}

// Over returns an error naming what passed slack times b, or nil.
func (c Cost) Over(b Budget, slack int) error {
	if c.CPU > time.Duration(slack)*b.CPU || c.Memory > int64(slack)*b.Memory {
		return fmt.Errorf("cost %s, over %d× the budget of %s CPU and %d MiB", c, slack, b.CPU, b.Memory>>20)
	}
	return nil
}

// Measure runs f and returns the CPU time this process spent meanwhile
// (every goroutine's, the collector's included) and the bytes it
// allocated. Run nothing else in the process meanwhile (no t.Parallel).
func Measure(f func()) Cost {
	cpu0, alloc0 := processCPU(), allocated()
	f()
	return Cost{CPU: processCPU() - cpu0, Memory: int64(allocated() - alloc0)}
}

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// allocated is the bytes the heap has handed out since the process began.
func allocated() uint64 {
	s := []metrics.Sample{allocSample[0]}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
