// Package lockorder is a mutex that knows its place in its package's
// written lock order. In binaries built with the tag lockorder (the
// broker's tests run so in CI: `go test -tags lockorder ./broker/...`),
// taking a Mutex while the same goroutine holds one of the same or a later
// rank panics, naming both: an inversion of the order fails the test that
// took it, before it ever deadlocks. In other builds a Mutex is a
// sync.Mutex and the checks compile to nothing.
package lockorder

import "sync"

// Rank places a Mutex in the lock order: a lock of a lower rank is taken
// first. R's zero value is used, so a rank is a type, such as
// `type rankTable struct{}` with `func (rankTable) Rank() (int, string)`.
type Rank interface {
	// Rank is the lock's place in the order and its name, for the panic.
	Rank() (order int, name string)
}

// Mutex is a sync.Mutex of rank R. Its zero value is unlocked.
type Mutex[R Rank] struct {
	mu sync.Mutex
}

// Lock locks m; see the package doc for the check.
func (m *Mutex[R]) Lock() {
	var r R
	acquire(m, r)
	m.mu.Lock()
}

// Unlock unlocks m.
func (m *Mutex[R]) Unlock() {
	release(m)
	m.mu.Unlock()
}
