// Package loopback binds a TCP port on every loopback address of the host
// at once: 127.0.0.1 and, where the host has IPv6 loopback, [::1]. Loopback
// is shared by every account of the machine, and a client that dials
// http://localhost:PORT may try ::1 first: a port held on 127.0.0.1 alone
// leaves its [::1] side to whoever binds it, who then receives what was
// meant for the owner. [Listen] holds both sides, or neither.
package loopback

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
)

// Listen binds port (0 for any free one) on 127.0.0.1 and on [::1] where
// the host has IPv6 loopback, and returns them as one listener whose Addr
// is the IPv4 one. A port whose [::1] side is taken is not bound at all:
// the error is the [::1] bind's (syscall.EADDRINUSE for a taken port).
func Listen(port int) (net.Listener, error) {
	var last error
	for range 10 { // port 0: the IPv4 port the kernel picked may be taken on ::1
		v4, err := net.Listen("tcp4", addr("127.0.0.1", port))
		if err != nil {
			return nil, err
		}
		p := v4.Addr().(*net.TCPAddr).Port
		v6, err := net.Listen("tcp6", addr("::1", p))
		switch {
		case err == nil:
			return newPair(v4, v6), nil
		case noIPv6(err):
			return v4, nil
		}
		v4.Close()
		if port != 0 {
			return nil, fmt.Errorf("the IPv6 side of port %d: %w", p, err)
		}
		last = err
	}
	return nil, last
}

// ListenAddr binds address (host:port): on both loopback addresses when
// host is 127.0.0.1, ::1 or localhost, else as net.Listen does.
func ListenAddr(address string) (net.Listener, error) {
	host, ps, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %q of %s is not a port number", ps, address)
	}
	switch host {
	case "127.0.0.1", "::1", "localhost":
		return Listen(port)
	}
	return net.Listen("tcp", address)
}

// noIPv6 reports whether err says that ::1 does not exist here (IPv6 off,
// or no ::1 on the loopback interface), not that the port is taken.
func noIPv6(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EPROTONOSUPPORT)
}

func addr(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// pair is a listener on both loopback addresses of one port: one goroutine
// per address accepts and hands each connection (or error) to Accept.
type pair struct {
	v4, v6   net.Listener
	accepted chan accepted
	done     chan struct{}
	once     sync.Once
}

type accepted struct {
	c   net.Conn
	err error
}

func newPair(v4, v6 net.Listener) *pair {
	p := &pair{v4: v4, v6: v6, accepted: make(chan accepted), done: make(chan struct{})}
	go p.acceptFrom(v4)
	go p.acceptFrom(v6)
	return p
}

// acceptFrom accepts on ln until the pair is closed. An error (too many
// open files, say) is handed on as it is, so that the server that calls
// Accept backs off as it does for one listener.
func (p *pair) acceptFrom(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil && errors.Is(err, net.ErrClosed) {
			return
		}
		select {
		case p.accepted <- accepted{c, err}:
		case <-p.done:
			if c != nil {
				c.Close()
			}
			return
		}
	}
}

// Accept returns the next connection to either address.
func (p *pair) Accept() (net.Conn, error) {
	select {
	case a := <-p.accepted:
		return a.c, a.err
	case <-p.done:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: p.v4.Addr(), Err: net.ErrClosed}
	}
}

// Close releases both addresses.
func (p *pair) Close() error {
	var err error
	p.once.Do(func() {
		close(p.done)
		err = errors.Join(p.v4.Close(), p.v6.Close())
	})
	return err
}

// Addr is the IPv4 address.
func (p *pair) Addr() net.Addr { return p.v4.Addr() }
