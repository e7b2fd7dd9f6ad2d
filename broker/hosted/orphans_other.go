//go:build unix && !linux

package hosted

// becomeSubreaper does nothing: macOS has no subreaper. A process a server
// starts that leaves the server's process group and outlives it is not
// found (docs/servers.md says so).
func becomeSubreaper() error { return nil }

// killTagged finds nothing: macOS gives no process's environment to
// another without the C library.
func killTagged(func(string) bool) []int { return nil }

// killAdopted finds nothing: without a subreaper the broker adopts none.
func killAdopted(map[int]bool) []int { return nil }

// reapAdopted does nothing: without a subreaper the broker adopts none.
func reapAdopted(map[int]bool, []int) {}
