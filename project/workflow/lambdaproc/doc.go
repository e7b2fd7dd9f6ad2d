// Package lambdaproc runs a gate's lambdas (package pylambda) in a child
// process under a memory limit, a CPU limit and a deadline, and kills it
// when one is reached. Starlark bounds a lambda's steps but not what one
// builtin allocates or computes ([0] * 500000000, str(list(range(10**8)))),
// and it offers no way to stop a call from outside: a process can be
// stopped, and its memory is its own.
//
// The child is the berth binary itself, started with the hidden command
// [ChildCommand]; tests start their own test binary, whose TestMain calls
// [RunIfChild]. The parent writes one JSON batch to the child's stdin and
// reads one JSON outcome a line, as each call ends, so that when the child
// is stopped the call that was running is known: it fails with the reason
// (a failed check, with a clear message), and the calls after it fail as
// not run.
//
// Limits, set by the child on itself before it reads its input:
//   - Linux: RLIMIT_AS at the address space the child has at start plus
//     [Limits.Memory], so that an allocation past it fails at once (the Go
//     runtime then exits with "out of memory"); macOS does not enforce
//     RLIMIT_AS, so there only the watchdog below holds memory.
//   - Everywhere: a watchdog that reads the Go runtime's own count of the
//     memory it has mapped every few milliseconds and exits past
//     Limits.Memory; RLIMIT_CPU at [Limits.CPU] (the child exits when the
//     kernel warns with SIGXCPU, and is killed a second later); a soft
//     memory limit for the garbage collector; GOMAXPROCS=1.
//   - The parent kills the child at [Limits.Timeout] of wall time, or as
//     soon as the request's context ends (its client left).
package lambdaproc
