//go:build lockorder

package lockorder

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

// held is each goroutine's locks of this package, in the order taken.
var (
	heldMu sync.Mutex
	held   = map[uint64][]heldLock{}
)

type heldLock struct {
	lock  any
	order int
	name  string
}

// acquire checks that no lock the calling goroutine holds comes at or
// after r, and records the lock as held.
func acquire(lock any, r Rank) {
	order, name := r.Rank()
	g := goid()
	heldMu.Lock()
	defer heldMu.Unlock()
	for _, h := range held[g] {
		if h.order >= order {
			panic(fmt.Sprintf("lock order: %s (rank %d) taken while %s (rank %d) is held", name, order, h.name, h.order))
		}
	}
	held[g] = append(held[g], heldLock{lock, order, name})
}

// release forgets lock: the calling goroutine no longer holds it.
func release(lock any) {
	g := goid()
	heldMu.Lock()
	defer heldMu.Unlock()
	hs := held[g]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].lock == lock {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(held, g)
	} else {
		held[g] = hs
	}
}

// goid is the calling goroutine's id, from the first line of its stack
// ("goroutine 18 [running]:"): slow, for test builds only.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("lockorder: cannot read the goroutine's id: " + err.Error())
	}
	return id
}

// Checking reports whether the order is checked in this build.
const Checking = true
