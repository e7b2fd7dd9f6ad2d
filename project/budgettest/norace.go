//go:build !race

package budgettest

// RaceSlowdown is how many times slower a build with the race detector
// runs, for the limits of timings (1 without it).
const RaceSlowdown = 1
