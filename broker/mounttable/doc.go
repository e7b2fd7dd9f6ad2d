// Package mounttable is the broker's table of mounted projects: one job,
// to keep each project served while something holds it. It mounts a
// project on an attach (its engine, its MCP serving, its loopback port,
// its hosted servers), records who holds it (shims, by lease and pid, and
// `berth attach` pins), writes its state file for sub-agents and its
// record in the registry (the port it keeps, its pin), and unmounts it
// when its grace period ends, its root vanishes or the broker stops.
// Taking a slot out of the table, then unmounting its mount
// (takeOutLocked, unmountTaken) is the one way a mount leaves it.
//
// # Lock order
//
// Each mutex guards the fields written beside it. One that is taken while
// another is held comes later in this list (its ranks in lockranks.go,
// checked in tests built with -tags lockorder by broker/lockorder);
// nothing here is held while a project opens or closes, a file is
// written, or a callback out of the package runs (the dashboard's poke,
// the metrics), except where the list says so:
//
//  1. Table.regMu (registry writes) or a mount's stateMu (its state
//     file), never both.
//  2. Table.mu, the table. It is held to read or change slots only: a
//     mount is described (its sessions, index and port) from a copy of
//     its slot taken under it (held), with the lock released. Deps.OnEmpty
//     is called under it, and takes only a leaf (the broker's idle timer).
//  3. Leaves taken under Table.mu: a mount's httpMu (its port), and the
//     lock of Deps.OnEmpty.
//
// A mount's own parts are taken without the table's lock: the locks of
// its MCP serving (broker/mcpserve, its order in its package doc),
// mountServers.warnMu and repoView.mu are leaves. The hosted servers'
// updates are serialized in broker/hosted (its own order, in its package
// doc), never under a lock of this package.
//
// # Goroutines
//
// Each mount owns its goroutines and its shutdown waits for them: its
// port's server, its session sweep, and the wait for its index's first
// catch-up that then trims the broker's memory (trimOnceIndexed). The
// grace timers are the table's: CloseAll stops them.
package mounttable
