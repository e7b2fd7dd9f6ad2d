//go:build !race

package workflowtest

// RaceSlack is 1: see race.go.
const RaceSlack = 1
