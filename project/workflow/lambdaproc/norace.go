//go:build !race

package lambdaproc

// raceBuild is false: see race.go.
const raceBuild = false
