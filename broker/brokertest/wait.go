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

// Poll's pauses between two checks: the first is short, so that an event
// of moments is seen at once; each pause doubles up to pollMax, so that a
// wait of seconds (a broker starting, an idle timer) costs tens of checks,
// not hundreds, while it is seen at most pollMax late. A check may be an
// API call or a scan of every process of the machine.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = 100 * time.Millisecond
)

// Poll calls cond, then again after each pause (10 ms, doubling up to
// 100 ms), until it is true or d has passed, and reports whether it became
// true. Every wait of the system tests goes through it, so each one is
// bounded.
func Poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for pause := pollFirst; ; pause = min(2*pause, pollMax) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
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
