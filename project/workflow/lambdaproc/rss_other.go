//go:build !linux

package lambdaproc

// rssUnit is the unit of Rusage.Maxrss: bytes on macOS.
const rssUnit = 1
