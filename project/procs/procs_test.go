package procs

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

const testMax = 4 // processors the tests give the runtime before governing

// govern starts the governor on testMax processors with calm, and ends it
// (and restores the runtime's count) when the test ends.
func govern(t *testing.T, calm time.Duration) {
	t.Helper()
	t.Setenv("GOMAXPROCS", "") // the user's choice, were it set
	before := runtime.GOMAXPROCS(testMax)
	stop := Govern(calm)
	if !gov.on.Load() {
		t.Fatal("Govern did not start governing")
	}
	t.Cleanup(func() {
		stop()
		runtime.GOMAXPROCS(before)
	})
}

// procsNow is the runtime's processor count, read between the governor's
// changes.
func procsNow() int {
	gov.mu.Lock()
	defer gov.mu.Unlock()
	return runtime.GOMAXPROCS(0)
}

// unitsNow and holdsNow are the units in hand and the parallel work running.
func unitsNow() int64 { return gov.state.Load() & unitMask }
func holdsNow() int64 { return (gov.state.Load() & holdMask) / hold }

// narrow runs the governor's checks until the runtime is on one processor,
// failing after a few: a calm governor narrows on its second check.
func narrow(t *testing.T) {
	t.Helper()
	for range 3 {
		gov.check()
		if procsNow() == 1 {
			return
		}
	}
	t.Fatalf("still %d processors after three calm checks (units %d, holds %d)", procsNow(), unitsNow(), holdsNow())
}

func TestNarrowsOnceCalm(t *testing.T) {
	govern(t, 10*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for procsNow() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the governor never narrowed: %d processors", procsNow())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := Max(); got != testMax {
		t.Fatalf("Max() = %d while narrow, want every processor (%d)", got, testMax)
	}
}

func TestOneUnitStaysNarrowTwoWiden(t *testing.T) {
	govern(t, time.Hour) // the checks run by hand
	narrow(t)

	Enter()
	if n := procsNow(); n != 1 {
		t.Fatalf("one unit in hand: %d processors, want 1", n)
	}
	Enter()
	if n := procsNow(); n != testMax {
		t.Fatalf("two units in hand: %d processors, want %d", n, testMax)
	}
	gov.check()
	if n := procsNow(); n != testMax {
		t.Fatalf("a check while two units are in hand narrowed to %d", n)
	}
	Leave()
	Leave()
	gov.check() // the crowding since the last check keeps it wide once more
	if n := procsNow(); n != testMax {
		t.Fatalf("the first check after two units narrowed at once: %d processors", n)
	}
	gov.check()
	if n := procsNow(); n != 1 {
		t.Fatalf("two calm checks: %d processors, want 1", n)
	}
}

func TestWorkersWidenWhileParallel(t *testing.T) {
	govern(t, time.Hour)
	narrow(t)

	if w, done := Workers(1); w != 1 || procsNow() != 1 {
		t.Fatalf("Workers(1) = %d on %d processors, want 1 on 1", w, procsNow())
	} else {
		done()
	}
	w, done := Workers(100)
	if w != testMax {
		t.Fatalf("Workers(100) = %d, want %d", w, testMax)
	}
	if n := procsNow(); n != testMax {
		t.Fatalf("parallel work running on %d processors, want %d", n, testMax)
	}
	gov.check()
	gov.check()
	if n := procsNow(); n != testMax {
		t.Fatalf("checks while parallel work runs narrowed to %d", n)
	}
	done()
	done() // twice counts once
	if h := holdsNow(); h != 0 {
		t.Fatalf("holds after done twice: %d, want 0", h)
	}
	narrow(t)
	if w, done := Workers(3); w != 3 {
		t.Fatalf("Workers(3) = %d, want 3", w)
	} else {
		done()
	}
}

func TestStopHandsEveryProcessorBack(t *testing.T) {
	before := runtime.GOMAXPROCS(testMax)
	defer runtime.GOMAXPROCS(before)
	stop := Govern(time.Hour)
	narrow(t)
	stop()
	if gov.on.Load() {
		t.Fatal("still governing after stop")
	}
	if n := runtime.GOMAXPROCS(0); n != testMax {
		t.Fatalf("after stop: %d processors, want %d", n, testMax)
	}
}

func TestGOMAXPROCSInTheEnvironmentTurnsItOff(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	before := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(before)
	stop := Govern(time.Millisecond)
	defer stop()
	if gov.on.Load() {
		t.Fatal("governing though GOMAXPROCS is set in the environment")
	}
	if w, done := Workers(10); w != 3 {
		t.Fatalf("Workers(10) = %d, want the runtime's 3", w)
	} else {
		done()
	}
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("the runtime's count changed to %d", n)
	}
}

// Units entered from many goroutines while the governor checks on its own
// (every 20 microseconds): whenever two are in hand, the runtime is wide.
func TestTwoUnitsAtOnceAlwaysWide(t *testing.T) {
	govern(t, 20*time.Microsecond)
	const pairs, rounds = 4, 2000
	var wg sync.WaitGroup
	errs := make(chan string, pairs*rounds)
	for range pairs {
		var both sync.WaitGroup
		wg.Go(func() {
			for range rounds {
				both.Add(2)
				var looked sync.WaitGroup
				looked.Add(2)
				var inner sync.WaitGroup
				for range 2 {
					inner.Go(func() {
						Enter()
						both.Done()
						both.Wait() // both units are in hand now
						if n := procsNow(); n != testMax {
							errs <- fmt.Sprintf("two units in hand on %d processors (state %#x)", n, gov.state.Load())
						}
						looked.Done()
						looked.Wait() // neither leaves before both looked
						Leave()
					})
				}
				inner.Wait()
				if w, done := Workers(2); procsNow() != testMax {
					errs <- "parallel work on one processor"
					done()
				} else if w != 2 {
					errs <- "Workers(2) gave fewer than 2"
					done()
				} else {
					done()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if u, h := unitsNow(), holdsNow(); u != 0 || h != 0 {
		t.Fatalf("after every unit left: units %d, holds %d", u, h)
	}
	deadline := time.Now().Add(10 * time.Second)
	for procsNow() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("never narrowed after the work ended: %d processors", procsNow())
		}
		time.Sleep(2 * time.Millisecond)
	}
}
