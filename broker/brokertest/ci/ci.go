// Package ci decides what a test lacking something it needs does: it is
// skipped on a developer's machine, and fails under BERTH_CI, which installs
// everything the tests need, so that a CI run never passes by skipping. It
// imports nothing of Berth, so that every test helper package can use it.
package ci

import (
	"os"
	"testing"
)

// Required reports whether the run is a CI run (BERTH_CI set), where
// everything a test needs is installed: a lack is a failure, not a skip.
func Required() bool { return os.Getenv("BERTH_CI") != "" }

// Unavailable skips the test for want of something it needs (the message
// says what and how to get it), or fails it under BERTH_CI.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Required() {
		tb.Fatalf(format, args...)
	}
	tb.Skipf(format, args...)
}
