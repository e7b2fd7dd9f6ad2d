// Package pollio reads and writes a socket or pipe that the runtime polls
// (non-blocking) with plain system calls, where the standard library's
// Read and Write pass through the runtime's blocking-call bookkeeping.
//
// That bookkeeping costs a hop through the broker more than the call
// itself. Before each read and write the runtime tells its monitor thread
// (sysmon) that a goroutine may block in the kernel; when the process
// was idle a moment before (a project port between two calls, the broker
// waiting for a hosted server's answer) that thread sleeps, and the
// telling is a futex wake of it: a thread woken in the middle of each
// call's path, twice a call, which then polls every 20 us until the
// process is idle again, on a CPU the client and the server need. A read
// or write of a non-blocking descriptor never blocks, so it needs none of
// that: [Conn], [Listener] and [File] make those reads and writes
// directly, and leave waiting for the descriptor (deadlines, closing) to
// the runtime's poller as before.
//
// Anything that is not a pollable TCP connection or file (another
// platform, a file the poller does not hold) is returned as it is, and so
// is everything in a build with the race detector: the standard library's
// reads and writes tell the detector that what a goroutine did before a
// write happens before what another does after the read that takes it
// (an SSE session's endpoint event, say, and the POST it brings), and
// plain system calls would hide that, making every such exchange a race.
package pollio

import "net"

// Listener returns ln with each TCP connection it accepts wrapped by [Conn].
func Listener(ln net.Listener) net.Listener {
	if !supported {
		return ln
	}
	return &listener{Listener: ln}
}

type listener struct{ net.Listener }

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Conn(c), nil
}
