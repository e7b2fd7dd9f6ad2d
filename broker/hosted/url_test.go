package hosted

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
