package brokertest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/loopback"
)

// Port ranges for test brokers come from blocks of blockSize ports
// between firstPort and lastPort: below every ephemeral range (Linux
// starts at 32768, macOS at 49152), so no client connection's own port
// lands in a broker's range. Each test process holds one block alone (an
// flock on a file per block, held until the process exits), and hands
// out ranges that do not overlap a range still in use in the process: two
// brokers of two tests never share a port, as a broker takes any free
// port of its range and a port given back by one could go to the other.
const (
	firstPort = 20000
	lastPort  = 31999
	blockSize = 2000
)

// blockWait bounds the wait for a block while every one is held by other
// test processes.
const blockWait = 2 * time.Minute

// ranges is the process's block and the ranges in use in it.
var ranges struct {
	sync.Mutex
	lock  *os.File    // the held block's lock file, open until exit
	start int         // the block's first port
	next  int         // where the search for a range begins
	inUse map[int]int // start -> size of the ranges handed out
}

// PortRange returns a range of n loopback ports, all free a moment ago
// on 127.0.0.1 and [::1] alike (the broker binds both), that no other test
// of any test process has until tb ends.
func PortRange(tb testing.TB, n int) (start, end int) {
	tb.Helper()
	if n < 1 || n > blockSize {
		tb.Fatalf("PortRange(%d): a range holds 1 to %d ports", n, blockSize)
	}
	ranges.Lock()
	defer ranges.Unlock()
	if ranges.lock == nil {
		if err := holdBlock(); err != nil {
			tb.Fatal(err)
		}
	}
	for tries := 0; tries < blockSize; tries++ {
		s := ranges.next
		if s+n > ranges.start+blockSize {
			s = ranges.start
		}
		ranges.next = s + 1
		if overlapsInUse(s, n) {
			continue
		}
		if taken := firstTaken(s, n); taken >= 0 {
			ranges.next = taken + 1 // another program holds it
			continue
		}
		ranges.next = s + n
		ranges.inUse[s] = n
		tb.Cleanup(func() {
			ranges.Lock()
			delete(ranges.inUse, s)
			ranges.Unlock()
		})
		return s, s + n - 1
	}
	tb.Fatalf("no %d free loopback ports in a row in ports %d-%d (the test process's block)", n, ranges.start, ranges.start+blockSize-1)
	return 0, 0
}

// overlapsInUse reports whether s..s+n-1 shares a port with a range in use.
func overlapsInUse(s, n int) bool {
	for us, un := range ranges.inUse {
		if s < us+un && us < s+n {
			return true
		}
	}
	return false
}

// firstTaken is the first port of s..s+n-1 that cannot be bound now, or -1.
func firstTaken(s, n int) int {
	for p := s; p < s+n; p++ {
		ln, err := loopback.Listen(p)
		if err != nil {
			return p
		}
		ln.Close()
	}
	return -1
}

// holdBlock takes the first block no other test process holds, waiting
// while every one is held.
func holdBlock() error {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("berth-test-ports-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("port blocks for test brokers: %w", err)
	}
	deadline := time.Now().Add(blockWait)
	for {
		for b := firstPort; b+blockSize-1 <= lastPort; b += blockSize {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.lock", b)), os.O_CREATE|os.O_RDWR, 0o600)
			if err != nil {
				return fmt.Errorf("port blocks for test brokers: %w", err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				f.Close()
				continue
			}
			ranges.lock, ranges.start, ranges.next, ranges.inUse = f, b, b, make(map[int]int)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("every block of ports %d-%d is held by another test process (lock files in %s) after %s; let them end", firstPort, lastPort, dir, blockWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
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
