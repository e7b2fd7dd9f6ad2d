package brokertest

import (
	"os"
	"testing"
	"time"
)

// WaitLimit bounds Eventually: long enough for a loaded machine (the
// system tests run four at once on two shared cores, where an event of
// moments has been seen to take more than 10 s), short enough that a wait
// that never ends fails the test instead of hanging it. A wait that ends
// costs only its event's time, so the bound is generous. Processes built
// with the race detector (BERTH_TEST_RACE) run several times slower: they
// get three times as long.
var WaitLimit = waitLimit()

func waitLimit() time.Duration {
	if os.Getenv("BERTH_TEST_RACE") != "" {
		return 90 * time.Second
	}
	return 30 * time.Second
}

// pollEvery is how often Poll checks its condition.
const pollEvery = 25 * time.Millisecond

// Poll calls cond every 25 ms until it is true or d has passed, and
// reports whether it became true. Every wait of the system tests goes
// through it, so each one is bounded.
func Poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// Eventually polls cond for at most WaitLimit and fails the test, naming
// what never happened, if it stays false.
func Eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !Poll(WaitLimit, cond) {
		tb.Fatalf("never within %s: %s", WaitLimit, what)
	}
}
