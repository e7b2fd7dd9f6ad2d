package brokertest

import (
	"math/rand/v2"
	"testing"

	"github.com/berth-dev/berth/broker/loopback"
)

// PortRange returns a range of n loopback ports that were all free a
// moment ago, on 127.0.0.1 and [::1] alike (the broker binds both).
func PortRange(tb testing.TB, n int) (start, end int) {
	tb.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		start = 20000 + rand.IntN(30000)
		free := true
		for p := start; p < start+n; p++ {
			ln, err := loopback.Listen(p)
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return start, start + n - 1
		}
	}
	tb.Fatal("no free port range found")
	return 0, 0
}

// AssertPortFree fails the test (without stopping it) when port cannot be
// bound on loopback (127.0.0.1, and [::1] where the host has it):
// something still holds it.
func AssertPortFree(tb testing.TB, port int) {
	tb.Helper()
	ln, err := loopback.Listen(port)
	if err != nil {
		tb.Errorf("port %d still held: %v", port, err)
		return
	}
	ln.Close()
}
