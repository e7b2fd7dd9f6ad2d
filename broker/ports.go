package broker

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// errPortsFull reports that no port of the range could be bound.
var errPortsFull = errors.New("no free port")

// bindPort binds the first free loopback port, trying the preferred ports
// first (those inside start..end), then the rest of the range in order,
// wrapping around. The listener is returned open: the port is ours from the
// moment it is chosen, with no probe-then-bind race.
func bindPort(preferred []int, start, end int) (net.Listener, int, error) {
	tried := make(map[int]bool)
	try := func(p int) (net.Listener, error) {
		tried[p] = true
		return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	var lastErr error
	first := start
	for _, p := range preferred {
		if p < start || p > end || tried[p] {
			continue
		}
		if first == start {
			first = p
		}
		ln, err := try(p)
		if err == nil {
			return ln, p, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) && !errors.Is(err, syscall.EACCES) {
			lastErr = err
		}
	}
	n := end - start + 1
	for i := 0; i < n; i++ {
		p := start + (first-start+i)%n
		if tried[p] {
			continue
		}
		ln, err := try(p)
		if err == nil {
			return ln, p, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) && !errors.Is(err, syscall.EACCES) {
			lastErr = err
		}
	}
	if lastErr != nil {
		return nil, 0, fmt.Errorf("%w in ports.start..ports.end (%d-%d): every port is taken (last error: %v); widen the range in the broker config (ports.start, ports.end) or stop what holds them", errPortsFull, start, end, lastErr)
	}
	return nil, 0, fmt.Errorf("%w in ports.start..ports.end (%d-%d): every port is taken; widen the range in the broker config (ports.start, ports.end) or stop what holds them", errPortsFull, start, end)
}
