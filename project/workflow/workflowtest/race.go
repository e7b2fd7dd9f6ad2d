//go:build race

package workflowtest

// RaceSlack: the race detector's builds run several times slower.
const RaceSlack = 5
