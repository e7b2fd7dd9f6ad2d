package search

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// resetPeak resets the process's peak resident set to its current size
// (clear_refs 5) and returns that size in bytes.
func resetPeak(tb testing.TB) int64 {
	tb.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Fatalf("reset the peak RSS: %v", err)
	}
	return procStatus(tb, "VmRSS:")
}

// readPeak returns the peak resident set since resetPeak, in bytes.
func readPeak(tb testing.TB) int64 { return procStatus(tb, "VmHWM:") }

func procStatus(tb testing.TB, key string) int64 {
	tb.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("%s%s: %v", key, rest, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no %s in /proc/self/status", key)
	return 0
}
