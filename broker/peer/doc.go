// Package peer tells which account owns the other end of a connection to
// this machine, and guards HTTP servers with that answer ([Guard]).
//
// Every account on a machine can reach every loopback port. A unix socket
// can be kept private with its file mode; a TCP port cannot, so the broker
// asks the kernel who holds the peer's socket:
//
//   - Linux: one sock_diag netlink request (NETLINK_SOCK_DIAG, inet_diag,
//     the exact address-pair lookup, as `ss` does) returns the peer socket's
//     owner. When netlink is refused or finds nothing (some sandboxes, a
//     kernel without inet_diag), /proc/net/tcp and /proc/net/tcp6 are read
//     instead. IPv4, IPv6 and IPv4-mapped IPv6 sockets are all found. A unix
//     socket's peer is read with SO_PEERCRED.
//   - macOS and other systems: lookups fail with [ErrUnsupported]. macOS has
//     no public interface for it without cgo: the sysctl
//     net.inet.tcp.pcblist_n carries each socket's so_uid, but its records
//     (struct xsocket_n) are declared PRIVATE in xnu and their layout has
//     changed between releases. The broker relies on its bearer token there.
//
// The uid is the one the kernel recorded when the peer created its socket.
// A peer whose socket is already closed (TIME_WAIT, orphaned) has no owner:
// such lookups fail with [ErrNoPeer], so a request whose sender hung up
// before the check is refused.
package peer
