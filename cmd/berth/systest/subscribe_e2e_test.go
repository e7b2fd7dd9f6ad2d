package systest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// updatedClient is a go-sdk client that reports the URIs of the
// notifications/resources/updated it hears.
func updatedClient(t *testing.T, ctx context.Context, tr mcp.Transport, version string) (*mcp.ClientSession, chan string) {
	t.Helper()
	ch := make(chan string, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "berth-test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case ch <- req.Params.URI:
			default:
			}
		},
	})
	s, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ch
}

// updatedFor waits (bounded) for the session's first update, which must be
// for want: a session hears only of what it subscribed to.
func updatedFor(t *testing.T, ch chan string, who, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Errorf("%s heard notifications/resources/updated for %q, want %q", who, got, want)
		}
	case <-time.After(2 * brokertest.WaitLimit): // server-everything sends one at once, then every 5 s
		t.Errorf("%s heard no notifications/resources/updated for %q", who, want)
	}
}

// TestHostedResourceSubscription: a session on the project's HTTP port and
// a window through berth-shim (on MCP 2025-06-18) subscribe to
// server-everything's resources, a listed one and one of its template; the
// server's notifications/resources/updated reach each of them for its own
// URI. An unknown URI is still not found.
func TestHostedResourceSubscription(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b, root, url := everythingProject(t, ctx, "subscriptions")
	agent, agentUpd := updatedClient(t, ctx, &mcp.StreamableClientTransport{Endpoint: url}, "")
	tr, _ := shimTransport(t, b.Home, root)
	window, windowUpd := updatedClient(t, ctx, tr, "2025-06-18")

	static := brokertest.StaticDocument(t, ctx, agent)
	const templated = "demo://resource/dynamic/text/7"
	if err := agent.Subscribe(ctx, &mcp.SubscribeParams{URI: static}); err != nil {
		t.Fatalf("subscribe %s: %v", static, err)
	}
	if err := window.Subscribe(ctx, &mcp.SubscribeParams{URI: templated}); err != nil {
		t.Fatalf("subscribe %s: %v", templated, err)
	}
	err := window.Subscribe(ctx, &mcp.SubscribeParams{URI: "unknown://nothing"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeResourceNotFound {
		t.Errorf("subscribe to an unknown URI: %v, want resource not found", err)
	}

	callText(t, ctx, agent, "everything__toggle-subscriber-updates", map[string]any{})
	updatedFor(t, agentUpd, "the agent on the HTTP port", static)
	updatedFor(t, windowUpd, "the window through berth-shim", templated)
}
