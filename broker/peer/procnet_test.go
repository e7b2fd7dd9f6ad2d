package peer

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Lines read from /proc/net/tcp and /proc/net/tcp6 of an x86_64 Linux 6.18
// machine (little-endian words), with a second account (uid 1001) holding
// client sockets.
var procLines = []struct {
	name, line string
	want       procEntry
}{
	{
		name: "IPv4 established, another account",
		line: "   3: 0100007F:B1B4 0100007F:9CD9 01 00000000:00000000 00:00000000 00000000  1001        0 58047 2 00000000743444f8 20 0 0 10 -1                     ",
		want: procEntry{local: ap("127.0.0.1:45492"), remote: ap("127.0.0.1:40153"), state: 1, uid: 1001, inode: 58047},
	},
	{
		name: "IPv4 established, root",
		line: "   4: 0100007F:9CD9 0100007F:B1B4 01 00000000:00000000 00:00000000 00000000     0        0 58035 1 0000000056d65688 20 0 0 10 -1                     ",
		want: procEntry{local: ap("127.0.0.1:40153"), remote: ap("127.0.0.1:45492"), state: 1, uid: 0, inode: 58035},
	},
	{
		name: "IPv4 listening",
		line: "   0: 0100007F:820F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 29146 1 00000000d9f94499 100 0 0 10 0                     ",
		want: procEntry{local: ap("127.0.0.1:33295"), remote: ap("0.0.0.0:0"), state: 0x0A, inode: 29146},
	},
	{
		name: "IPv4 TIME_WAIT: no uid, no inode",
		line: "   4: 0100007F:6C59 0100007F:80EC 06 00000000:00000000 03:000013D6 00000000     0        0 0 3 00000000c7b310c9                                      ",
		want: procEntry{local: ap("127.0.0.1:27737"), remote: ap("127.0.0.1:33004"), state: 6},
	},
	{
		name: "IPv4 closed by its owner, FIN_WAIT2",
		line: "  10: 0100007F:E876 0100007F:820F 05 00000000:00000000 03:0000176B 00000000     0        0 0 3 00000000aa1d705e                                      ",
		want: procEntry{local: ap("127.0.0.1:59510"), remote: ap("127.0.0.1:33295"), state: 5},
	},
	{
		name: "IPv4 to another host",
		line: "   1: 020200C0:83A0 507100CB:01BB 06 00000000:00000000 03:0000110E 00000000     0        0 0 3 00000000ea53ca4e                                      ",
		want: procEntry{local: ap("192.0.2.2:33696"), remote: ap("203.0.113.80:443"), state: 6},
	},
	{
		name: "IPv6 loopback, another account",
		line: "   1: 00000000000000000000000001000000:D2C6 00000000000000000000000001000000:D5E5 01 00000000:00000000 00:00000000 00000000  1001        0 58049 2 0000000031faa378 20 0 0 10 -1",
		want: procEntry{local: ap("[::1]:53958"), remote: ap("[::1]:54757"), state: 1, uid: 1001, inode: 58049},
	},
	{
		name: "IPv6 listening",
		line: "   0: 00000000000000000000000001000000:B043 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 29140 1 00000000ce6bb649 100 0 0 10 0",
		want: procEntry{local: ap("[::1]:45123"), remote: ap("[::]:0"), state: 0x0A, inode: 29140},
	},
	{
		name: "dual-stack socket connected to IPv4",
		line: "   3: 0000000000000000FFFF00000100007F:B1BE 0000000000000000FFFF00000100007F:9CD9 01 00000000:00000000 00:00000000 00000000  1001        0 58051 2 0000000003679f0f 20 0 0 10 -1",
		want: procEntry{local: ap("[::ffff:127.0.0.1]:45502"), remote: ap("[::ffff:127.0.0.1]:40153"), state: 1, uid: 1001, inode: 58051},
	},
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

var cmpEntry = cmp.Comparer(func(a, b procEntry) bool { return a == b })

func TestParseProcLine(t *testing.T) {
	for _, tc := range procLines {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcLine(tc.line, binary.LittleEndian)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpEntry); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseProcLineByteOrder(t *testing.T) {
	// A big-endian kernel prints 127.0.0.1 as 7F000001.
	got, err := parseProcLine("   0: 7F000001:1F90 7F000001:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1", binary.BigEndian)
	if err != nil {
		t.Fatal(err)
	}
	want := procEntry{local: ap("127.0.0.1:8080"), remote: ap("127.0.0.1:54498"), state: 1, uid: 1000, inode: 77}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestParseProcLineRejects(t *testing.T) {
	for name, line := range map[string]string{
		"header":             "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"too few fields":     "   0: 0100007F:1F90 0100007F:D4E2 01 00000000:00000000",
		"no port":            "   0: 0100007F 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"short address":      "   0: 100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"not hex":            "   0: 0100007G:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"signed hex":         "   0: +100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"long port":          "   0: 0100007F:01F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"mixed families":     "   0: 0100007F:1F90 00000000000000000000000001000000:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"uid not a number":   "   0: 0100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  root        0 77 1",
		"uid over 32 bits":   "   0: 0100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  4294967296        0 77 1",
		"state of one digit": "   0: 0100007F:1F90 0100007F:D4E2 1 00000000:00000000 00:00000000 00000000  1000        0 77 1",
		"inode negative":     "   0: 0100007F:1F90 0100007F:D4E2 01 00000000:00000000 00:00000000 00000000  1000        0 -77 1",
	} {
		if e, err := parseProcLine(line, binary.LittleEndian); err == nil {
			t.Errorf("%s: parsed as %+v, want an error", name, e)
		}
	}
}

func TestFindProc(t *testing.T) {
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	var tcp, tcp6 strings.Builder
	tcp.WriteString(header)
	tcp6.WriteString(header)
	for _, l := range procLines {
		if l.want.local.Addr().Is4() {
			tcp.WriteString(l.line + "\n")
		} else {
			tcp6.WriteString(l.line + "\n")
		}
	}
	for _, tc := range []struct {
		name, table string
		src, dst    string
		want        procEntry
		found       bool
	}{
		{"IPv4", tcp.String(), "127.0.0.1:45492", "127.0.0.1:40153", procLines[0].want, true},
		{"IPv4 in reverse is the other end", tcp.String(), "127.0.0.1:40153", "127.0.0.1:45492", procLines[1].want, true},
		{"IPv6", tcp6.String(), "[::1]:53958", "[::1]:54757", procLines[6].want, true},
		{"IPv4 pair of a dual-stack socket", tcp6.String(), "127.0.0.1:45502", "127.0.0.1:40153", procLines[8].want, true},
		{"IPv4 pair not in the IPv4 table", tcp.String(), "127.0.0.1:45502", "127.0.0.1:40153", procEntry{}, false},
		{"same ports, other address", tcp.String(), "127.0.0.2:45492", "127.0.0.1:40153", procEntry{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := findProc(strings.NewReader(tc.table), binary.LittleEndian, ap(tc.src), ap(tc.dst))
			if err != nil {
				t.Fatal(err)
			}
			if found != tc.found || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v, %v", got, found, tc.want, tc.found)
			}
		})
	}
	if _, _, err := findProc(strings.NewReader(header+"   0: garbage\n"), binary.LittleEndian, ap("127.0.0.1:1"), ap("127.0.0.1:2")); err == nil {
		t.Fatal("a malformed table was read without error")
	}
}
