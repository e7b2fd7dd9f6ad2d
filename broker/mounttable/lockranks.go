package mounttable

import "github.com/berth-dev/berth/broker/lockorder"

// The lock order of the package doc, as ranks: lockorder checks it in the
// tests (built with -tags lockorder). The ranks are shared with the
// broker's: a hook the table calls under its lock (Deps.OnEmpty) takes only
// a lock of rank 3 or later.

// rankRegistry is Table.regMu and a mount's stateMu: never both.
type rankRegistry struct{}

func (rankRegistry) Rank() (int, string) { return 1, "Table.regMu or a mount's stateMu" }

// rankTable is Table.mu.
type rankTable struct{}

func (rankTable) Rank() (int, string) { return 2, "Table.mu" }

// rankLeaf is a mount's httpMu, taken under the table's lock.
type rankLeaf struct{}

func (rankLeaf) Rank() (int, string) { return 3, "a mount's httpMu" }

// The package's ranked mutexes.
type (
	regLock   = lockorder.Mutex[rankRegistry]
	tableLock = lockorder.Mutex[rankTable]
	leafLock  = lockorder.Mutex[rankLeaf]
)
