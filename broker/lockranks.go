package broker

import "github.com/berth-dev/berth/broker/lockorder"

// The idle timer's lock, as a rank: lockorder checks it in the tests
// (built with -tags lockorder). The mount table (broker/mounttable) takes
// it under its own lock, rank 2 there, when it tells the timer whether it
// is empty (mounttable.Deps.OnEmpty).
type rankIdle struct{}

func (rankIdle) Rank() (int, string) { return 3, "idleTimer.mu" }

// idleLock is the idle timer's mutex.
type idleLock = lockorder.Mutex[rankIdle]
