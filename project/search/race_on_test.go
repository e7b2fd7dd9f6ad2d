//go:build race

package search

// raceEnabled: the race detector slows every memory access several times
// over, so the budgets of budget_test.go are not checked under it.
const raceEnabled = true
