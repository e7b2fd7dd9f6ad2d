package peer

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

const supported = true

// tcpOwner asks netlink first; /proc is the answer when netlink is refused
// or finds nothing (a kernel without inet_diag answers ENOENT too).
func tcpOwner(local, remote netip.AddrPort) (uint32, error) {
	s, err := sockDiag(remote, local)
	if err == nil {
		return s.owner()
	}
	s, perr := procLookup(remote, local)
	if perr != nil {
		return 0, fmt.Errorf("peer: %w (netlink: %v)", perr, err)
	}
	return s.owner()
}

// connCred reads a unix socket peer's credentials.
func connCred(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer: %T connections are not supported: %w", c, ErrUnsupported)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer: %w", err)
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer: SO_PEERCRED: %w", cerr)
	}
	if cred.Pid == 0 {
		return 0, errors.Join(ErrNoPeer, errors.New("the unix socket has no peer process"))
	}
	return cred.Uid, nil
}
