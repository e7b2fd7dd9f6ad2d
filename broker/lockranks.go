package broker

import "github.com/berth-dev/berth/broker/lockorder"

// The lock order of the package doc, as ranks: lockorder checks it in the
// tests (built with -tags lockorder).

// rankRegistry is mounts.regMu and a mount's stateMu: never both.
type rankRegistry struct{}

func (rankRegistry) Rank() (int, string) { return 1, "mounts.regMu or a mount's stateMu" }

// rankTable is mounts.mu.
type rankTable struct{}

func (rankTable) Rank() (int, string) { return 2, "mounts.mu" }

// rankLeaf is the leaves taken under the table's lock: a mount's httpMu
// and the idle timer's mu.
type rankLeaf struct{}

func (rankLeaf) Rank() (int, string) { return 3, "a mount's httpMu or idleTimer.mu" }

// The package's ranked mutexes.
type (
	regLock   = lockorder.Mutex[rankRegistry]
	tableLock = lockorder.Mutex[rankTable]
	leafLock  = lockorder.Mutex[rankLeaf]
)
