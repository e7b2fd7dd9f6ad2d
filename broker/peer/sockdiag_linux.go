package peer

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Sizes of the inet_diag structures (linux/inet_diag.h); x/sys/unix has
// the netlink header but not these.
const (
	sizeofSockID  = 48 // struct inet_diag_sockid
	sizeofReqV2   = 8 + sizeofSockID
	sizeofDiagMsg = 4 + sizeofSockID + 20 // struct inet_diag_msg
	noCookie      = ^uint32(0)            // INET_DIAG_NOCOOKIE
)

var diagSeq atomic.Uint32

// sockDiag asks the kernel for the TCP socket whose local address is src
// and whose remote address is dst: a SOCK_DIAG_BY_FAMILY request without
// NLM_F_DUMP, which the kernel answers with an exact lookup in its
// connection table (an IPv4 lookup also finds a dual-stack IPv6 socket
// connected to an IPv4 address). It opens one netlink socket per call.
func sockDiag(src, dst netip.AddrPort) (socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return socket{}, fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2}); err != nil {
		return socket{}, fmt.Errorf("netlink timeout: %w", err)
	}
	seq := diagSeq.Add(1)
	if err := unix.Sendto(fd, diagRequest(src, dst, seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return socket{}, fmt.Errorf("netlink send: %w", err)
	}
	var buf [1024]byte
	n, _, err := unix.Recvfrom(fd, buf[:], 0)
	if err != nil {
		return socket{}, fmt.Errorf("netlink receive: %w", err)
	}
	return parseDiagReply(buf[:n], seq, src, dst)
}

// diagRequest is a netlink message asking for one TCP socket by address.
func diagRequest(src, dst netip.AddrPort, seq uint32) []byte {
	ne := binary.NativeEndian
	b := make([]byte, unix.SizeofNlMsghdr+sizeofReqV2)
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], seq)
	r := b[unix.SizeofNlMsghdr:]
	r[0] = unix.AF_INET6
	if src.Addr().Is4() {
		r[0] = unix.AF_INET
	}
	r[1] = unix.IPPROTO_TCP
	ne.PutUint32(r[4:], ^uint32(0)) // every TCP state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], src.Port())
	binary.BigEndian.PutUint16(id[2:], dst.Port())
	putAddr(id[4:20], src.Addr())
	putAddr(id[20:36], dst.Addr())
	ne.PutUint32(id[40:], noCookie)
	ne.PutUint32(id[44:], noCookie)
	return b
}

func putAddr(b []byte, a netip.Addr) {
	if a.Is4() {
		v := a.As4()
		copy(b, v[:])
		return
	}
	v := a.As16()
	copy(b, v[:])
}

// parseDiagReply reads the kernel's answer: one inet_diag_msg naming the
// socket asked for, or an error (ENOENT when there is none).
func parseDiagReply(b []byte, seq uint32, src, dst netip.AddrPort) (socket, error) {
	ne := binary.NativeEndian
	if len(b) < unix.SizeofNlMsghdr {
		return socket{}, fmt.Errorf("netlink: short reply (%d bytes)", len(b))
	}
	mlen, typ, mseq := ne.Uint32(b[0:]), ne.Uint16(b[4:]), ne.Uint32(b[8:])
	if mlen < unix.SizeofNlMsghdr || int(mlen) > len(b) {
		return socket{}, fmt.Errorf("netlink: reply length %d of %d bytes", mlen, len(b))
	}
	if mseq != seq {
		return socket{}, fmt.Errorf("netlink: reply to request %d, want %d", mseq, seq)
	}
	body := b[unix.SizeofNlMsghdr:mlen]
	switch typ {
	case unix.NLMSG_ERROR:
		if len(body) < 4 {
			return socket{}, fmt.Errorf("netlink: short error reply")
		}
		errno := -int32(ne.Uint32(body))
		if errno == 0 {
			return socket{}, fmt.Errorf("netlink: acknowledgement instead of an answer")
		}
		return socket{}, fmt.Errorf("sock_diag: %w", unix.Errno(errno))
	case unix.SOCK_DIAG_BY_FAMILY:
	default:
		return socket{}, fmt.Errorf("netlink: unexpected reply type %d", typ)
	}
	if len(body) < sizeofDiagMsg {
		return socket{}, fmt.Errorf("netlink: short inet_diag_msg (%d bytes)", len(body))
	}
	family, state, id := body[0], body[1], body[4:4+sizeofSockID]
	gotSrc := netip.AddrPortFrom(diagAddr(family, id[4:20]), binary.BigEndian.Uint16(id[0:]))
	gotDst := netip.AddrPortFrom(diagAddr(family, id[20:36]), binary.BigEndian.Uint16(id[2:]))
	if gotSrc != src || gotDst != dst {
		return socket{}, fmt.Errorf("netlink: answer names %s -> %s, asked for %s -> %s", gotSrc, gotDst, src, dst)
	}
	tail := body[4+sizeofSockID:]
	return socket{uid: ne.Uint32(tail[12:]), inode: uint64(ne.Uint32(tail[16:])), state: state}, nil
}

// diagAddr reads an address of an inet_diag_sockid, unmapping IPv4-mapped
// IPv6 addresses (a dual-stack socket's IPv4 connection).
func diagAddr(family uint8, b []byte) netip.Addr {
	if family == unix.AF_INET {
		return netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrFrom16([16]byte(b[:16])).Unmap()
}
