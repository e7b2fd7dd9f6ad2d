//go:build !linux

package lambdaproc

import "os/exec"

// limitOS sets RLIMIT_CPU. macOS does not enforce RLIMIT_AS: memory is
// held by the watchdog alone (see the package doc).
func limitOS(_ int64, cpuSeconds int) error { return setCPU(cpuSeconds) }

// setProcAttr does nothing: without a parent-death signal, a child whose
// broker died ends at its CPU limit or when its input is done.
func setProcAttr(*exec.Cmd) {}
