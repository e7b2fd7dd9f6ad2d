package peer

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"golang.org/x/sys/unix"
)

// dualStackDial connects to addr from an IPv6 socket that is not
// IPv6-only, so the kernel holds the client end as an IPv6 socket with
// IPv4-mapped addresses (as Java and curl can).
func dualStackDial(t *testing.T, addr netip.AddrPort) net.Conn {
	t.Helper()
	fd := dualStackSocket(t)
	mapped := netip.AddrFrom16(addr.Addr().As16())
	if err := unix.Connect(fd, &unix.SockaddrInet6{Addr: mapped.As16(), Port: int(addr.Port())}); err != nil {
		unix.Close(fd)
		t.Fatalf("connect %s: %v", mapped, err)
	}
	f := os.NewFile(uintptr(fd), "dual-stack")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dualStackSocket is an IPv6 TCP socket that also speaks IPv4.
func dualStackSocket(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return fd
}

// dualStackListen listens on ::ffff:127.0.0.1 from an IPv6 socket that is
// not IPv6-only: its connections have IPv4-mapped addresses.
func dualStackListen(t *testing.T) net.Listener {
	t.Helper()
	fd := dualStackSocket(t)
	if err := unix.Bind(fd, &unix.SockaddrInet6{Addr: netip.MustParseAddr("::ffff:127.0.0.1").As16()}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 8); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "dual-stack listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// accepted returns the server end of a connection made by dial.
func accepted(t *testing.T, ln net.Listener, dial func() net.Conn) (server, client net.Conn) {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	client = dial()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close(); client.Close() })
	return r.c, client
}

func listen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func addrs(c net.Conn) (local, remote netip.AddrPort) {
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

// TestOwnerOfOwnConnections looks up connections this process made, over
// every address family, with netlink and with /proc, and both must name
// this process's uid.
func TestOwnerOfOwnConnections(t *testing.T) {
	me := uint32(os.Getuid())
	dialer := func(ln net.Listener) func() net.Conn {
		return func() net.Conn {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	cases := map[string]func() net.Conn{}
	v4 := listen(t, "tcp4", "127.0.0.1:0")
	v6 := listen(t, "tcp6", "[::1]:0")
	mapped := dualStackListen(t)
	t.Cleanup(func() { mapped.Close() })
	cases["IPv4"] = func() net.Conn { s, _ := accepted(t, v4, dialer(v4)); return s }
	cases["IPv6"] = func() net.Conn { s, _ := accepted(t, v6, dialer(v6)); return s }
	cases["dual-stack client to an IPv4 server"] = func() net.Conn {
		s, _ := accepted(t, v4, func() net.Conn { return dualStackDial(t, v4.Addr().(*net.TCPAddr).AddrPort()) })
		return s
	}
	cases["IPv4 client to a dual-stack server"] = func() net.Conn { s, _ := accepted(t, mapped, dialer(mapped)); return s }
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			server := mk()
			uid, err := ConnOwner(server)
			if err != nil || uid != me {
				t.Fatalf("ConnOwner = %d, %v; want %d", uid, err, me)
			}
			local, remote := addrs(server)
			local, remote = unmap(local), unmap(remote)
			s, err := sockDiag(remote, local)
			if err != nil || s.uid != me || s.inode == 0 {
				t.Fatalf("netlink: %+v, %v; want uid %d and an inode", s, err, me)
			}
			p, err := procLookup(remote, local)
			if err != nil || p != s {
				t.Fatalf("/proc: %+v, %v; netlink said %+v", p, err, s)
			}
			// The server's own end is this process's too, and another socket.
			mine, err := sockDiag(local, remote)
			if err != nil || mine.uid != me || mine.inode == s.inode {
				t.Fatalf("own end: %+v, %v", mine, err)
			}
		})
	}
}

// TestClosedPeerHasNoOwner: once the client has closed its socket, the
// kernel keeps it only as a TIME_WAIT (or orphaned FIN_WAIT2) entry with
// uid 0; that must never pass for root.
func TestClosedPeerHasNoOwner(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	server, client := accepted(t, ln, func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	client.Close()
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := server.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the client closed: %v, want EOF", err)
	}
	local, remote := addrs(server)
	var err error
	brokertest.Poll(brokertest.WaitLimit, func() bool { // the client end may still be closing
		_, err = ConnOwner(server)
		return errors.Is(err, ErrNoPeer)
	})
	if !errors.Is(err, ErrNoPeer) {
		t.Fatalf("ConnOwner after the peer closed: %v, want ErrNoPeer", err)
	}
	s, err := sockDiag(remote, local)
	if err == nil {
		if _, oerr := s.owner(); !errors.Is(oerr, ErrNoPeer) || s.inode != 0 {
			t.Fatalf("netlink: %+v -> %v, want no owner", s, oerr)
		}
	}
	p, err := procLookup(remote, local)
	if err == nil {
		if _, oerr := p.owner(); !errors.Is(oerr, ErrNoPeer) {
			t.Fatalf("/proc: %+v -> %v, want no owner", p, oerr)
		}
	} else if !errors.Is(err, ErrNoPeer) {
		t.Fatal(err)
	}
}

func TestUnknownConnectionHasNoOwner(t *testing.T) {
	_, err := TCPOwner(ap("127.0.0.1:1"), ap("127.0.0.1:2"))
	if !errors.Is(err, ErrNoPeer) {
		t.Fatalf("a pair nobody holds: %v, want ErrNoPeer", err)
	}
	if _, err := TCPOwner(ap("127.0.0.1:1"), ap("[::1]:2")); err == nil {
		t.Fatal("a pair of two families was looked up")
	}
}

func TestUnixSocketOwner(t *testing.T) {
	ln := listen(t, "unix", filepath.Join(t.TempDir(), "s"))
	server, _ := accepted(t, ln, func() net.Conn {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	uid, err := ConnOwner(server)
	if err != nil || uid != uint32(os.Getuid()) {
		t.Fatalf("ConnOwner = %d, %v; want %d", uid, err, os.Getuid())
	}
}
