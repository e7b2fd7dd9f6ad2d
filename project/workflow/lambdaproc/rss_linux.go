//go:build linux

package lambdaproc

// rssUnit is the unit of Rusage.Maxrss: KiB on Linux.
const rssUnit = 1 << 10
