package hosted

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestURLServer: a server declared by url is reached over streamable HTTP
// (a go-sdk server on a loopback port) and served like a command one.
func TestURLServer(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	up := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("hello over http"), nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(hs.Close)
	decl := map[string]config.Server{"web": {URL: hs.URL}}
	if err := config.ValidateServers(decl); err != nil {
		t.Fatal(err)
	}
	d := Decls(decl, nil)[0]
	hp := openProject(t, newPool(t, testOptions()), "p1", d)
	s := connect(t, hp, sessionOpts{})
	if got := s.call(t, ctx, "web__hello", nil); got != "hello over http" {
		t.Fatalf("web__hello = %q", got)
	}
	if st := statusOf(t, hp, "web"); st.State != StateRunning || st.PID != 0 || st.Command != hs.URL {
		t.Errorf("status %+v", st)
	}
}

// TestRefusedURLFailsAtOnce: a url that Options.CheckURL refuses is never
// dialled; the server fails at its first start, without restarts, and its
// status says why.
func TestRefusedURLFailsAtOnce(t *testing.T) {
	var mu sync.Mutex
	checked := 0
	opts := testOptions()
	opts.CheckURL = func(_ context.Context, server, url string) error {
		mu.Lock()
		checked++
		mu.Unlock()
		return fmt.Errorf("servers.%s.url %s points at Berth itself", server, url)
	}
	decl := map[string]config.Server{"self": {URL: "http://127.0.0.1:1/mcp", Start: config.StartEager}}
	if err := config.ValidateServers(decl); err != nil {
		t.Fatal(err)
	}
	hp := openProject(t, newPool(t, opts), "p1", Decls(decl, nil)[0])
	if !brokertest.Poll(10*time.Second, func() bool { return statusOf(t, hp, "self").State == StateFailed }) {
		t.Fatalf("status %+v, want failed", statusOf(t, hp, "self"))
	}
	mu.Lock()
	n := checked
	mu.Unlock()
	if st := statusOf(t, hp, "self"); n != 1 || st.Restarts != 0 || !strings.Contains(st.LastError, "points at Berth itself") {
		t.Fatalf("checked %d times, status %+v", n, st)
	}
}
