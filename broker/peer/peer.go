package peer

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

var (
	// ErrUnsupported means this system cannot tell who owns a connection's
	// other end (macOS, and every system but Linux).
	ErrUnsupported = errors.New("this system cannot tell which account owns a TCP connection")
	// ErrNoPeer means no open socket of this machine is the connection's
	// other end: the peer has closed it, or it is on another host.
	ErrNoPeer = errors.New("no open socket on this machine at the other end of the connection")
)

// Supported reports whether this system can tell connections' owners.
func Supported() bool { return supported }

// ConnOwner returns the uid of the account whose process holds the other
// end of c, an accepted TCP connection (or a unix socket connection on
// Linux).
func ConnOwner(c net.Conn) (uint32, error) {
	l, lok := c.LocalAddr().(*net.TCPAddr)
	r, rok := c.RemoteAddr().(*net.TCPAddr)
	if lok && rok {
		return TCPOwner(l.AddrPort(), r.AddrPort())
	}
	return connCred(c)
}

// TCPOwner returns the uid of the account whose process holds the TCP
// socket at remote that is connected to local, a socket of this process:
// the owner of the peer of the connection (local, remote). IPv4-mapped IPv6
// addresses are taken as IPv4.
func TCPOwner(local, remote netip.AddrPort) (uint32, error) {
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	if !local.IsValid() || !remote.IsValid() || local.Addr().Is4() != remote.Addr().Is4() {
		return 0, fmt.Errorf("peer: cannot look up the connection %s -> %s: not one address family", remote, local)
	}
	return tcpOwner(local, remote)
}

// socket is what the kernel says about the peer's socket.
type socket struct {
	uid   uint32
	inode uint64 // 0 once no process holds the socket (closed, TIME_WAIT)
	state uint8
}

// owner is the socket's owner, or ErrNoPeer when no process holds it any
// more: the kernel reports uid 0 for such sockets, which must not pass for
// root.
func (s socket) owner() (uint32, error) {
	if s.inode == 0 {
		return 0, fmt.Errorf("%w (its socket is closed, in TCP state %d)", ErrNoPeer, s.state)
	}
	return s.uid, nil
}
