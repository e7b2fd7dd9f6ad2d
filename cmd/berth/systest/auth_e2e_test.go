package systest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds fixed headers to every request it passes to next
// (http.DefaultTransport when nil).
type headerTransport struct {
	h    map[string]string
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	if t.next == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return t.next.RoundTrip(r)
}

// TestTokenAuthIsASecondKey: with auth: token the state file carries the
// token and the IDE's path needs none; the user's own clients reach the
// port with or without it (the account check admits them; the token admits
// other accounts, see TestAnotherAccountGetsNothing), and with a wrong one
// get 401.
func TestTokenAuthIsASecondKey(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--auth", "token"}})
	ctx := testCtx(t, 30*time.Second)
	root := brokertest.Project(t, "secret", nil)
	tr, _ := shimTransport(t, b.Home, root)
	connectMCP(t, ctx, tr) // the IDE's path needs no token: the socket is 0600
	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sf.Headers["Authorization"], "Bearer ") {
		t.Fatalf("state file headers = %v", sf.Headers)
	}
	for _, h := range []map[string]string{nil, sf.Headers} {
		s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL, HTTPClient: &http.Client{Transport: headerTransport{h: h}}})
		if info := getServerInfo(t, ctx, s); info.Project.Root != root {
			t.Fatalf("with headers %v: %+v", h, info)
		}
	}
	r, err := http.Post(*sf.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if e := api.ParseError(r.StatusCode, raw); e.Code == api.CodeNotOwner || e.Code == api.CodeUnauthorized {
		t.Fatalf("the owner without the token: %d %+v", r.StatusCode, e)
	}
	// A wrong token is refused, even from the owner's account: the client
	// hears that its credential is wrong, on every system.
	req, _ := http.NewRequest("POST", *sf.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer not-the-token")
	req.Header.Set("Content-Type", "application/json")
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if e := api.ParseError(r.StatusCode, raw); r.StatusCode != http.StatusUnauthorized || e.Code != api.CodeUnauthorized {
		t.Fatalf("the owner with a wrong token: %d %s, want 401", r.StatusCode, raw)
	}
}

// TestMaxSessionsIsEnforced opens 11 sessions at once on a project with
// the default mcp.max_sessions (10), over all three network transports:
// exactly one is refused, the way in answers 503 with Retry-After, another
// project is unaffected, and a closed session frees its place.
func TestMaxSessionsIsEnforced(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	full := b.Attach(t, brokertest.Project(t, "full", nil))
	other := b.Attach(t, brokertest.Project(t, "other", nil))
	base := fmt.Sprintf("127.0.0.1:%d", full.Port)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		opened  []*mcp.ClientSession
		refusal []error
	)
	for i := range 11 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent%d", i), Version: "1"}, nil)
			s, err := c.Connect(ctx, sessionTransport(i, full.URL, base), nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refusal = append(refusal, err)
				return
			}
			opened = append(opened, s)
			t.Cleanup(func() { s.Close() })
		}()
	}
	wg.Wait()
	if len(opened) != 10 || len(refusal) != 1 {
		t.Fatalf("%d sessions opened, %d refused (%v); want 10 and 1", len(opened), len(refusal), refusal)
	}
	if msg := refusal[0].Error(); !strings.Contains(msg, "503") && !strings.Contains(msg, "Service Unavailable") && !strings.Contains(msg, "max_sessions") {
		t.Errorf("the refusal does not say why: %v", refusal[0])
	}
	for _, s := range opened {
		getServerInfo(t, ctx, s) // every admitted session works
	}

	// Each way in answers 503 with Retry-After and a JSON error naming the key.
	ws, _ := http.NewRequest("GET", "http://"+base+"/ws", nil)
	ws.Header.Set("Connection", "Upgrade")
	ws.Header.Set("Upgrade", "websocket")
	ws.Header.Set("Sec-WebSocket-Version", "13")
	ws.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	ws.Header.Set("Sec-WebSocket-Protocol", "mcp")
	sse, _ := http.NewRequest("GET", "http://"+base+"/sse", nil)
	sse.Header.Set("Accept", "text/event-stream")
	for _, req := range []*http.Request{mcpPost(t, full.URL, "", initializeBody), sse, ws} {
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "mcp.max_sessions") ||
			api.ParseError(resp.StatusCode, body).Code != api.CodeBusy {
			t.Errorf("%s %s past the limit: %d Retry-After %q %s", req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}

	// Another project is unaffected.
	if info := getServerInfo(t, ctx, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: other.URL})); info.Project.Name != "other" {
		t.Fatalf("other project: %+v", info)
	}

	// A closed session frees its place; the broker notices within a bounded wait.
	opened[0].Close()
	var again *mcp.ClientSession
	if !brokertest.Poll(5*time.Second, func() bool {
		c := mcp.NewClient(&mcp.Implementation{Name: "again", Version: "1"}, nil)
		again, _ = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: full.URL, MaxRetries: -1}, nil)
		return again != nil
	}) {
		t.Fatal("no session opens after one of ten closed")
	}
	again.Close()
}

// sessionTransport spreads clients over the three network transports.
func sessionTransport(i int, url, hostPort string) mcp.Transport {
	switch i % 3 {
	case 0:
		return &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	case 1:
		return &mcp.SSEClientTransport{Endpoint: "http://" + hostPort + "/sse"}
	default:
		return &mcpws.ClientTransport{URL: "ws://" + hostPort + "/ws"}
	}
}
