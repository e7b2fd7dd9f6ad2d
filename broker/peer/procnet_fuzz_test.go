package peer

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// formatProcLine prints e the way the kernel does (the reference the
// parser is checked against).
func formatProcLine(e procEntry, order binary.ByteOrder) string {
	addr := func(a netip.AddrPort) string {
		var raw []byte
		if a.Addr().Is4() {
			b := a.Addr().As4()
			raw = b[:]
		} else {
			b := a.Addr().As16()
			raw = b[:]
		}
		var sb strings.Builder
		for i := 0; i < len(raw); i += 4 {
			fmt.Fprintf(&sb, "%08X", order.Uint32(raw[i:]))
		}
		return fmt.Sprintf("%s:%04X", sb.String(), a.Port())
	}
	return fmt.Sprintf("%4d: %s %s %02X 00000000:00000000 00:00000000 00000000 %5d        0 %d 1 0000000000000000 20 4 30 10 -1",
		0, addr(e.local), addr(e.remote), e.state, e.uid, e.inode)
}

// FuzzParseProcLine checks that the parser never panics, and that what it
// accepts prints back to a line it parses to the same socket.
func FuzzParseProcLine(f *testing.F) {
	for _, l := range procLines {
		f.Add(l.line, false)
		f.Add(l.line, true)
	}
	f.Add("  sl  local_address rem_address   st tx_queue", false)
	f.Add("   0: 0100007F:1F90 0100007F:D4E2 01 0 0 0 1000 0 77", false)
	f.Fuzz(func(t *testing.T, line string, bigEndian bool) {
		var order binary.ByteOrder = binary.LittleEndian
		if bigEndian {
			order = binary.BigEndian
		}
		e, err := parseProcLine(line, order)
		if err != nil {
			return
		}
		again, err := parseProcLine(formatProcLine(e, order), order)
		if err != nil {
			t.Fatalf("%q parsed to %+v, which prints to a line that does not parse: %v", line, e, err)
		}
		if again != e {
			t.Fatalf("%q parsed to %+v, printed and parsed again to %+v", line, e, again)
		}
		if strings.Contains(line, "\n") || len(line) > 60<<10 {
			return // not one line of a table
		}
		if _, _, err := findProc(strings.NewReader("header\n"+line+"\n"), order, unmap(e.local), unmap(e.remote)); err != nil {
			t.Fatalf("findProc refused a table of a line parseProcLine accepts: %v", err)
		}
	})
}
