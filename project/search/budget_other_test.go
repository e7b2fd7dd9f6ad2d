//go:build !linux

package search

import "testing"

// Without a peak RSS that can be reset, the bytes allocated stand for the
// peak (they bound it).

func resetPeak(testing.TB) int64 { return allocatedBytes() }

func readPeak(testing.TB) int64 { return allocatedBytes() }
