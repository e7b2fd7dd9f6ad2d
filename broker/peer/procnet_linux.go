package peer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
)

// procLookup finds the socket src -> dst in /proc/net/tcp and
// /proc/net/tcp6 (an IPv4 pair may belong to a dual-stack IPv6 socket,
// listed there with IPv4-mapped addresses). It reads the tables of this
// process's network namespace.
func procLookup(src, dst netip.AddrPort) (socket, error) {
	tables := []string{"/proc/net/tcp6"}
	if src.Addr().Is4() {
		tables = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	for _, t := range tables {
		f, err := os.Open(t)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return socket{}, err
		}
		e, ok, err := findProc(f, binary.NativeEndian, src, dst)
		f.Close()
		if err != nil {
			return socket{}, fmt.Errorf("%s: %w", t, err)
		}
		if ok {
			return e.socket(), nil
		}
	}
	return socket{}, ErrNoPeer
}
