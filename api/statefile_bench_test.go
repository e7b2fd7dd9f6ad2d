package api

import (
	"testing"
	"time"
)

// BenchmarkWriteStateFileFlip is the broker's write when a project's state
// file changes (a dual window joins a pinned project, then leaves).
func BenchmarkWriteStateFileFlip(b *testing.B) {
	root := newRoot(b)
	a := NewStateFile(TransportDual, 4300, 42, time.Now(), "p", root)
	c := NewStateFile(TransportHTTP, 4300, 42, time.Now(), "p", root)
	i := 0
	for b.Loop() {
		sf := a
		if i%2 == 1 {
			sf = c
		}
		i++
		if err := WriteStateFile(root, sf); err != nil {
			b.Fatal(err)
		}
	}
}
