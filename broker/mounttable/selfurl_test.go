package mounttable

import (
	"context"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokerconfig"
)

// TestSelfURLsAreRefused: a hosted url naming this machine at one of the
// broker's ports is refused with the fix; other ports, and hosts that are
// not this machine, pass.
func TestSelfURLsAreRefused(t *testing.T) {
	check := selfURLs(brokerconfig.Config{Listen: "127.0.0.1:4241", PortStart: 4242, PortEnd: 5242})
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:4300/mcp", "servers.s.url http://127.0.0.1:4300/mcp points at Berth itself: 127.0.0.1 is this machine (127.0.0.1) and port 4300 is inside its project ports 4242-5242 (ports.start, ports.end); a hosted server there would serve Berth's own tools back to it. Point url at another MCP server, or move that server to a port outside 4242-5242"},
		{"http://localhost:4242/mcp", "localhost is this machine"},
		{"http://[::1]:5242/mcp", "port 5242 is inside its project ports"},
		{"http://0.0.0.0:4500/mcp", "0.0.0.0 is this machine"},
		{"http://[::ffff:127.0.0.2]:4500/mcp", "is this machine (127.0.0.2)"},
		{"http://127.0.0.1:4241/projects/x/mcp", "port 4241 is its control API (listen 127.0.0.1:4241)"},
		{"http://127.0.0.1:3001/mcp", ""},
		{"http://127.0.0.1/mcp", ""},
		{"http://192.0.2.1:4300/mcp", ""}, // TEST-NET-1: not this machine
		{"http://no-such-host.invalid:4300/mcp", ""},
	} {
		err := check(context.Background(), "s", tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
}
