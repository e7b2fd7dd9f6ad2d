package bench

import (
	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"
)

// limitAddressSpace caps pid's address space at what it maps now plus
// headroom.
func limitAddressSpace(pid int, headroom int64) error {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return err
	}
	mi, err := p.MemoryInfo()
	if err != nil {
		return err
	}
	limit := mi.VMS + uint64(headroom)
	return unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit}, nil)
}
