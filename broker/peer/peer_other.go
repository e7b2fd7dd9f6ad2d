//go:build !linux

package peer

import (
	"net"
	"net/netip"
)

const supported = false

func tcpOwner(local, remote netip.AddrPort) (uint32, error) { return 0, ErrUnsupported }

func connCred(net.Conn) (uint32, error) { return 0, ErrUnsupported }
