//go:build unix

package broker

import (
	"syscall"
)

// raiseFileLimit raises the soft limit on open files to the hard limit
// (every connection, file and watch is one) and returns the limit in
// force. The Go runtime already lifts it to one below the hard limit; a
// system that refuses the hard limit itself (macOS caps it at
// kern.maxfilesperproc) keeps what it has.
func raiseFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = want.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			lim = want
		}
	}
	return uint64(lim.Cur)
}
