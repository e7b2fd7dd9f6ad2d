//go:build !race

package budgettest

const raceSlack = 1
