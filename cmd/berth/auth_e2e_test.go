package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestTokenAuthGuardsProjectPorts(t *testing.T) {
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
	r, err := http.Post(*sf.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", r.StatusCode)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL, HTTPClient: &http.Client{Transport: headerTransport{sf.Headers}}})
	if info := getServerInfo(t, ctx, s); info.Project.Root != root {
		t.Fatalf("with token: %+v", info)
	}
}

func TestMaxSessionsIsEnforced(t *testing.T) {
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 30*time.Second)
	resp := b.Attach(t, brokertest.Project(t, "capped", map[string]string{".praxis-os/config.yaml": "mcp:\n  max_sessions: 1\n"}))
	connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL})
	c := mcp.NewClient(&mcp.Implementation{Name: "second", Version: "1"}, nil)
	_, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL, MaxRetries: -1}, nil)
	if err == nil {
		t.Fatal("a second session opened past mcp.max_sessions: 1")
	}
}
