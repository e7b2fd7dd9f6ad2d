// Package procs runs the broker on one processor while it does one thing
// at a time, and on every processor the runtime gave it while it does more.
//
// Most of a broker's life is one client's calls, one after another: each
// call readies a few goroutines in turn (the request read, the tool or the
// hosted server's answer, the answer written). With a second processor
// idle, every goroutine readied wakes it (a futex wake of a parked thread,
// which spins on a CPU the client and the server need) and the hand-offs
// cross CPUs. On one processor the same call runs on one thread: the
// hosted hop measured 0.20 ms against 0.24-0.26 ms with two, Berth's own
// tool 0.85x (docs/benchmarks.md, "One processor while it does one thing").
// Building an index, or two calls at once, want every processor: work in
// hand is counted ([Enter], [Leave]) and parallel work asks for processors
// ([Workers]); the broker widens at once when two things run, and narrows
// again once it has been calm for a while.
//
// Nothing governs until [Govern] is called (the broker calls it as it
// starts): until then every function here leaves the runtime alone, so
// tests and the other programs run as Go sets them up. A GOMAXPROCS set in
// the environment is the user's choice and turns the governor off. The
// count the runtime chose when [Govern] was called (the machine's CPUs,
// or its container's limit) is the most it uses: a later change of a
// container's limit is not followed, as the runtime follows it only while
// nothing sets the count.
package procs

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCalm is how often a wide broker looks whether it may narrow: it
// does at the first look that finds nothing parallel running, fewer than
// two units in hand and none at once since the look before.
const DefaultCalm = 250 * time.Millisecond

// The governor's state is one word, so that a check that narrows and an
// Enter or Workers that needs the runtime wide see each other's change in
// one order: units in hand, parallel work running, whether the runtime is
// wide and whether a check is narrowing it right now.
const (
	unit         = 1
	unitMask     = hold - 1
	hold         = 1 << 24
	holdMask     = (1<<48 - 1) &^ unitMask
	wideBit      = 1 << 48 // the runtime runs on max processors
	narrowingBit = 1 << 49 // a check is narrowing; it holds the mutex
)

// busy reports whether a state asks for every processor.
func busy(s int64) bool { return s&holdMask != 0 || s&unitMask >= 2 }

// needsWiden reports whether an Enter or Workers that left the state s
// must widen before it returns: the runtime is narrow, or a check is
// narrowing it and may not yet have seen the change.
func needsWiden(s int64) bool { return s&wideBit == 0 || s&narrowingBit != 0 }

// governor holds the runtime's processor count. Its mutex orders the
// changes of the count; the state is read without it on every call.
type governor struct {
	on      atomic.Bool
	state   atomic.Int64 // units, holds, wideBit, narrowingBit
	crowded atomic.Bool  // two units ran at once since the last check

	mu    sync.Mutex
	max   int
	calm  time.Duration
	timer *time.Timer // armed while wide: the check that narrows
}

var gov governor

func init() { gov.state.Store(wideBit) }

// Govern starts governing the processors: the runtime's count at the call
// is the most the broker uses; it narrows to one once calm has passed with
// nothing parallel and never two units at once. It does nothing when
// GOMAXPROCS is set in the environment, when the runtime has a single
// processor, or while already governing. stop hands every processor back
// and ends it.
func Govern(calm time.Duration) (stop func()) {
	if os.Getenv("GOMAXPROCS") != "" { // empty is unset, as for the runtime
		return func() {}
	}
	g := &gov
	g.mu.Lock()
	defer g.mu.Unlock()
	all := runtime.GOMAXPROCS(0)
	if g.on.Load() || all < 2 {
		return func() {}
	}
	g.max, g.calm = all, calm
	g.state.Or(wideBit)
	g.crowded.Store(false)
	g.timer = time.AfterFunc(calm, g.check)
	g.on.Store(true)
	return g.stop
}

func (g *governor) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on.Load() {
		return
	}
	g.on.Store(false)
	g.timer.Stop()
	if g.state.Load()&wideBit == 0 {
		runtime.GOMAXPROCS(g.max)
		g.state.Or(wideBit)
	}
}

// Enter counts one unit of work in hand: a request being served, an
// index's catch-up. A second unit at once widens the runtime before
// Enter returns. Each Enter is paired with one Leave (units are counted
// whether or not the governor runs, so that pairs stay even across
// [Govern]).
func Enter() {
	g := &gov
	s := g.state.Add(unit)
	if s&unitMask >= 2 && g.on.Load() {
		g.crowded.Store(true)
		if needsWiden(s) {
			g.widen()
		}
	}
}

// Leave ends a unit Enter counted.
func Leave() { gov.state.Add(-unit) }

// Max is how many processors parallel work may use: every one the
// runtime gave the broker, even while it runs on one.
func Max() int {
	g := &gov
	if g.on.Load() {
		return g.max
	}
	return runtime.GOMAXPROCS(0)
}

// Workers is how many goroutines to run n pieces of parallel work on: at
// most [Max], at least 1. When that is more than one the runtime is wide
// until done is called.
func Workers(n int) (workers int, done func()) {
	workers = max(1, min(n, Max()))
	if workers < 2 {
		return workers, func() {}
	}
	g := &gov
	if s := g.state.Add(hold); g.on.Load() && needsWiden(s) {
		g.widen()
	}
	var once sync.Once
	return workers, func() { once.Do(func() { g.state.Add(-hold) }) }
}

// widen gives the runtime every processor and arms the check that
// narrows it again. It waits for a check narrowing right now, which
// holds the mutex and widens again itself when it sees the work.
func (g *governor) widen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on.Load() || g.state.Load()&wideBit != 0 {
		return
	}
	runtime.GOMAXPROCS(g.max)
	g.state.Or(wideBit)
	g.timer.Reset(g.calm)
}

// check narrows the runtime to one processor when nothing parallel runs,
// fewer than two units are in hand and none were at once since the last
// check; else it looks again after calm.
func (g *governor) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on.Load() || g.state.Load()&wideBit == 0 {
		return
	}
	if busy(g.state.Load()) || g.crowded.Swap(false) || !g.markNarrowing() {
		g.timer.Reset(g.calm)
		return
	}
	// From the mark on, an Enter or Workers that makes the state busy
	// sees narrowingBit and waits in widen for this check to end; the
	// check widens again if the state turned busy meanwhile.
	runtime.GOMAXPROCS(1)
	if old := g.state.And(^int64(narrowingBit)); busy(old) || g.crowded.Load() {
		runtime.GOMAXPROCS(g.max)
		g.state.Or(wideBit)
		g.timer.Reset(g.calm)
	}
}

// markNarrowing swaps wideBit for narrowingBit unless the state is busy;
// it reports whether it did.
func (g *governor) markNarrowing() bool {
	for range 1000 { // each failed swap is another goroutine's change
		s := g.state.Load()
		if busy(s) {
			return false
		}
		if g.state.CompareAndSwap(s, s&^wideBit|narrowingBit) {
			return true
		}
	}
	return false
}
