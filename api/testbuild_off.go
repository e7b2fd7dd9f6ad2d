//go:build !berthtest

package api

// applyTestBuild does nothing outside test builds (see testbuild_on.go).
func applyTestBuild() {}
