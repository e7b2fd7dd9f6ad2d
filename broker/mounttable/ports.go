package mounttable

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/berth-dev/berth/broker/loopback"
)

// errPortsFull reports that no port of the range could be bound.
var errPortsFull = errors.New("no free port")

// bindPort binds the first free loopback port, trying the preferred ports
// first (those inside start..end), then the rest of the range in order,
// wrapping around, and passing over the ports reserved says are another
// project's (nil: none are). The listener is returned open, on 127.0.0.1
// and [::1] (broker/loopback): the port is ours from the moment it is
// chosen, with no probe-then-bind race.
func bindPort(preferred []int, start, end int, reserved func(port int) bool) (net.Listener, int, error) {
	skip := make(map[int]bool)
	var lastErr error
	try := func(p int) net.Listener {
		if skip[p] || reserved != nil && reserved(p) {
			return nil
		}
		skip[p] = true
		ln, err := loopback.Listen(p)
		if err != nil && !errors.Is(err, syscall.EADDRINUSE) && !errors.Is(err, syscall.EACCES) {
			lastErr = err
		}
		return ln
	}
	first := start
	for _, p := range preferred {
		if p < start || p > end || skip[p] {
			continue
		}
		if first == start {
			first = p
		}
		if ln := try(p); ln != nil {
			return ln, p, nil
		}
	}
	n := end - start + 1
	for i := 0; i < n; i++ {
		p := start + (first-start+i)%n
		if ln := try(p); ln != nil {
			return ln, p, nil
		}
	}
	if lastErr != nil {
		return nil, 0, fmt.Errorf("%w in ports.start..ports.end (%d-%d): every port is taken or remembered for another project (last error: %v); widen the range in the broker config (ports.start, ports.end) or stop what holds them", errPortsFull, start, end, lastErr)
	}
	return nil, 0, fmt.Errorf("%w in ports.start..ports.end (%d-%d): every port is taken or remembered for another project; widen the range in the broker config (ports.start, ports.end) or stop what holds them", errPortsFull, start, end)
}
