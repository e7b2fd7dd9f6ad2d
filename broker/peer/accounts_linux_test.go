package peer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/peer/peertest"
)

// TestGuardRefusesARealSecondAccount serves a guarded handler on IPv4 and
// IPv6 loopback: this process's requests get the data, curl run as a
// second account gets 403 (plain request, a POST, a WebSocket upgrade),
// and each refused connection leaves one log line naming that account's uid.
func TestGuardRefusesARealSecondAccount(t *testing.T) {
	acct := peertest.Second(t)
	if acct.UID == uint32(os.Getuid()) {
		t.Fatalf("the second account %s has this process's uid %d", acct.Name, acct.UID)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			var logs logBuf
			g := NewGuard(Options{Token: "tok-0123456789abcdef", Name: "test", Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: hello, ReadHeaderTimeout: 10 * time.Second}
			g.Install(srv)
			url := serve(t, srv, ln)

			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if code, body := get(t, c, url, ""); code != http.StatusOK || body != "secret data" {
				t.Fatalf("owner: %d %q", code, body)
			}
			refused := [][]string{
				{"-g", url + "/"},
				{"-g", "-X", "POST", "-H", "Content-Type: text/plain", "--data", `{"root":"/tmp/x"}`, url + "/projects"},
				{"-g", "--http1.1", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
					"-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", url + "/ws"},
			}
			for _, args := range refused {
				code, body := acct.Curl(t, args...)
				wantRefused(t, code, body)
			}
			// A wrong token is a wrong credential, whoever sends it.
			if code, body := acct.Curl(t, "-g", "-H", "Authorization: Bearer wrong", url+"/"); code != http.StatusUnauthorized || strings.Contains(body, "secret") {
				t.Fatalf("second account with a wrong token: %d %q, want 401", code, body)
			}
			if code, body := acct.Curl(t, "-g", "-H", "Authorization: Bearer tok-0123456789abcdef", url+"/"); code != http.StatusOK || body != "secret data" {
				t.Fatalf("second account with the token: %d %q", code, body)
			}
			recs := logs.lines("another account")
			if len(recs) != len(refused) {
				t.Fatalf("%d log lines for %d refused connections: %v", len(recs), len(refused), logs.lines(""))
			}
			for _, r := range recs {
				if r["peer_uid"] != float64(acct.UID) {
					t.Fatalf("log line %v does not name uid %d", r, acct.UID)
				}
				if strings.Contains(fmt.Sprint(r), "/tmp/x") {
					t.Fatalf("log line %v carries the peer's data", r)
				}
			}
		})
	}
}

// TestLookupOfASecondAccountsSocket holds connections curl opens as the
// second account (IPv4, IPv6, and IPv4 from a dual-stack socket) and looks
// each up by netlink and by /proc while curl waits for the answer.
func TestLookupOfASecondAccountsSocket(t *testing.T) {
	acct := peertest.Second(t)
	v4 := listen(t, "tcp4", "127.0.0.1:0")
	v6 := listen(t, "tcp6", "[::1]:0")
	port := func(ln net.Listener) uint16 { return ln.Addr().(*net.TCPAddr).AddrPort().Port() }
	for _, tc := range []struct {
		name, url string
		ln        net.Listener
		dualStack bool
	}{
		{"IPv4", fmt.Sprintf("http://127.0.0.1:%d/", port(v4)), v4, false},
		{"IPv6", fmt.Sprintf("http://[::1]:%d/", port(v6)), v6, false},
		{"IPv4 from a dual-stack socket", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port(v4)), v4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type answer struct {
				code int
				err  error
			}
			curl := make(chan answer, 1)
			go func() {
				code, _, err := acct.TryCurl("-g", tc.url)
				curl <- answer{code, err}
			}()
			tc.ln.(*net.TCPListener).SetDeadline(time.Now().Add(15 * time.Second))
			c, err := tc.ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(15 * time.Second))
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil {
				t.Fatal(err)
			}
			req.Body.Close()
			local, remote := addrs(c)
			local, remote = unmap(local), unmap(remote)
			s, nerr := sockDiag(remote, local)
			p, perr := procLookup(remote, local)
			uid, cerr := ConnOwner(c)
			io.WriteString(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
			c.Close()
			if a := <-curl; a.err != nil || a.code != http.StatusNoContent {
				t.Fatalf("curl: %d, %v", a.code, a.err)
			}
			if nerr != nil || s.uid != acct.UID || s.inode == 0 {
				t.Fatalf("netlink: %+v, %v; want uid %d", s, nerr, acct.UID)
			}
			if perr != nil || p != s {
				t.Fatalf("/proc: %+v, %v; netlink said %+v", p, perr, s)
			}
			if cerr != nil || uid != acct.UID {
				t.Fatalf("ConnOwner: %d, %v", uid, cerr)
			}
			if tc.dualStack {
				f, err := os.Open("/proc/net/tcp")
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, found, _ := findProc(f, binary.NativeEndian, remote, local); found {
					t.Fatal("the client socket is an IPv4 socket: the dual-stack case is not tested")
				}
			}
		})
	}
}
