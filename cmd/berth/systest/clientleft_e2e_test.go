package systest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// TestCallOfAKilledClientIsCancelled kills, by its pid, a client process
// (curl) whose tool call is in flight on a streamable-HTTP session of an
// older protocol version, with no DELETE and no notifications/cancelled:
// the broker cancels the call (berth_test_hold sees its context end), and
// the session serves the next call. One plain call (the broker's fast
// path) at 2025-03-26 and 2025-06-18, and a batch (the go-sdk's transport)
// at 2025-03-26.
func TestCallOfAKilledClientIsCancelled(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("needs curl as the client process")
	}
	hold := t.TempDir()
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{brokertest.HoldEnv + "=" + hold}})
	ctx := testCtx(t, 90*time.Second)
	p := b.Attach(t, brokertest.Project(t, "leaving", nil))

	for _, c := range []struct {
		name, version string
		batch         bool
	}{
		{"one call at 2025-03-26", "2025-03-26", false},
		{"one call at 2025-06-18", "2025-06-18", false},
		{"a batch at 2025-03-26", "2025-03-26", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sid := initializeAt(t, ctx, p.URL, c.version)
			name := strings.NewReplacer(" ", "-", ".", "").Replace(c.name)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"berth_test_hold","arguments":{"name":%q}}}`, name)
			if c.batch {
				body = "[" + body + "]"
			}
			cmd := exec.CommandContext(ctx, curl, "-sS", "-N", "-o", os.DevNull, "-X", "POST", p.URL,
				"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
				"-H", "Mcp-Session-Id: "+sid, "-H", "MCP-Protocol-Version: "+c.version, "--data-binary", body)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			killed := false
			defer func() {
				if !killed {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}()
			started, cancelled := filepath.Join(hold, name+".started"), filepath.Join(hold, name+".cancelled")
			brokertest.Eventually(t, "the held call starts", func() bool { return exists(started) })
			if exists(cancelled) {
				t.Fatal("the call was cancelled before its client left")
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill curl (pid %d): %v", pid, err)
			}
			_ = cmd.Wait()
			killed = true
			brokertest.Eventually(t, fmt.Sprintf("the call of the killed client (pid %d) is cancelled", pid), func() bool { return exists(cancelled) })
			if status, msg := callServerInfoAt(t, ctx, p.URL, sid, c.version); status != http.StatusOK || msg == nil || msg.Error != nil {
				t.Fatalf("the session after its client left: %d %+v", status, msg)
			}
		})
	}
}

// initializeAt opens a raw session at protocol version.
func initializeAt(t *testing.T, ctx context.Context, url, version string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version)
	status, h, msg := doMCP(t, ctx, mcpPost(t, url, "", body))
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" || msg == nil || msg.Result == nil || !strings.Contains(string(msg.Result), version) {
		t.Fatalf("initialize at %s: %d session %q %+v", version, status, sid, msg)
	}
	req := mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req.Header.Set("MCP-Protocol-Version", version)
	if status, _, _ := doMCP(t, ctx, req); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}
	return sid
}

// callServerInfoAt calls get_server_info on a raw session of version.
func callServerInfoAt(t *testing.T, ctx context.Context, url, sid, version string) (int, *rpcMessage) {
	t.Helper()
	req := mcpPost(t, url, sid, serverInfoCall)
	req.Header.Set("MCP-Protocol-Version", version)
	status, _, msg := doMCP(t, ctx, req)
	return status, msg
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
