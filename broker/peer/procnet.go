package peer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// procEntry is one socket line of /proc/net/tcp or /proc/net/tcp6.
type procEntry struct {
	local, remote netip.AddrPort // as printed: tcp6 keeps IPv4-mapped addresses mapped
	state         uint8
	uid           uint32
	inode         uint64
}

func (e procEntry) socket() socket { return socket{uid: e.uid, inode: e.inode, state: e.state} }

// findProc reads a /proc/net/tcp or /proc/net/tcp6 table and returns the
// socket whose local and remote addresses are src and dst (IPv4-mapped
// addresses match their IPv4 form). order is the byte order the kernel
// printed addresses in: the host's.
func findProc(r io.Reader, order binary.ByteOrder, src, dst netip.AddrPort) (procEntry, bool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10) // large reads: the kernel formats the table page by page
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 || strings.TrimSpace(line) == "" {
			continue // the header
		}
		// Only the addresses of most lines are read: a busy machine lists
		// thousands of sockets.
		var f [3]string
		if fieldsInto(line, f[:]) < len(f) {
			return procEntry{}, false, fmt.Errorf("line %d: not a socket line of /proc/net/tcp", n)
		}
		local, err := parseProcAddr(f[1], order)
		if err != nil {
			return procEntry{}, false, fmt.Errorf("line %d: local address: %w", n, err)
		}
		if unmap(local) != src {
			continue
		}
		e, err := parseProcLine(line, order)
		if err != nil {
			return procEntry{}, false, fmt.Errorf("line %d: %w", n, err)
		}
		if unmap(e.remote) == dst {
			return e, true, nil
		}
	}
	return procEntry{}, false, sc.Err()
}

// fieldsInto stores the first len(f) space-separated fields of s in f and
// returns how many it found.
func fieldsInto(s string, f []string) int {
	n := 0
	for n < len(f) {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			end = len(s)
		}
		f[n], s = s[:end], s[end:]
		n++
	}
	return n
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// parseProcLine parses one socket line:
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ...
//	 0: 0100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 12345 ...
//
// Addresses are 32-bit words in hex, each in the host's byte order; ports
// are hex numbers.
func parseProcLine(line string, order binary.ByteOrder) (procEntry, error) {
	f := strings.Fields(line)
	if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
		return procEntry{}, errors.New("not a socket line of /proc/net/tcp")
	}
	var e procEntry
	var err error
	if e.local, err = parseProcAddr(f[1], order); err != nil {
		return e, fmt.Errorf("local address: %w", err)
	}
	if e.remote, err = parseProcAddr(f[2], order); err != nil {
		return e, fmt.Errorf("remote address: %w", err)
	}
	if e.local.Addr().Is4() != e.remote.Addr().Is4() {
		return e, errors.New("local and remote addresses of different families")
	}
	st, err := parseHex(f[3], 2)
	if err != nil {
		return e, fmt.Errorf("state: %w", err)
	}
	e.state = uint8(st)
	uid, err := strconv.ParseUint(f[7], 10, 32)
	if err != nil {
		return e, fmt.Errorf("uid: %w", err)
	}
	e.uid = uint32(uid)
	if e.inode, err = strconv.ParseUint(f[9], 10, 64); err != nil {
		return e, fmt.Errorf("inode: %w", err)
	}
	return e, nil
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6).
func parseProcAddr(s string, order binary.ByteOrder) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q has no port", s)
	}
	p, err := parseHex(port, 4)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port: %w", err)
	}
	var b [16]byte
	switch len(host) {
	case 8, 32:
	default:
		return netip.AddrPort{}, fmt.Errorf("address %q is neither 8 nor 32 hex digits", host)
	}
	for i := 0; i < len(host); i += 8 {
		w, err := parseHex(host[i:i+8], 8)
		if err != nil {
			return netip.AddrPort{}, err
		}
		order.PutUint32(b[i/2:], uint32(w))
	}
	if len(host) == 8 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(p)), nil
	}
	return netip.AddrPortFrom(netip.AddrFrom16(b), uint16(p)), nil
}

// parseHex parses exactly n hex digits.
func parseHex(s string, n int) (uint64, error) {
	if len(s) != n {
		return 0, fmt.Errorf("%q is not %d hex digits", s, n)
	}
	return strconv.ParseUint(s, 16, 64)
}
