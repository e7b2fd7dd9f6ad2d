package project

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFastToolListAnswersTheSameBytes(t *testing.T) {
	in, out := serverInfoSchemas()
	orig := &mcp.ListToolsResult{NextCursor: "c1", Tools: []*mcp.Tool{
		{Name: "get_server_info", Description: "d", InputSchema: in, OutputSchema: out},
		{Name: "get_recent_logs", InputSchema: recentLogsSchema()},
		{Name: "plain", InputSchema: map[string]any{"type": "object"}},
	}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return orig, nil }
	want, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	var sb schemaBytes
	for range 2 { // the second answer comes from the marshaled schemas
		res, err := sb.toolList(next)(context.Background(), "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("tools/list differs:\n got %s\nwant %s", got, want)
		}
	}
	if _, ok := orig.Tools[0].InputSchema.(*jsonschema.Schema); !ok {
		t.Error("the server's own tool was modified")
	}
	other := &mcp.CallToolResult{}
	res, err := sb.toolList(func(context.Context, string, mcp.Request) (mcp.Result, error) { return other, nil })(context.Background(), "tools/call", nil)
	if res != other || err != nil {
		t.Errorf("tools/call = %v, %v; want it passed through", res, err)
	}
}

// TestToolNamesAreWhatClientsAreListed: the engine's names come from the
// server itself, so they are exactly what a client's tools/list shows.
func TestToolNamesAreWhatClientsAreListed(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	e := openEngine(t, root)
	res, err := connectInMemory(t, e).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range res.Tools {
		listed = append(listed, tool.Name)
	}
	if got := e.ToolNames(); !slices.Equal(got, listed) || len(got) < 3 {
		t.Errorf("ToolNames() = %v, tools/list = %v", got, listed)
	}
	// The listing's own session is gone: only the client's is left.
	n := 0
	for range e.Server().Sessions() {
		n++
	}
	if n != 1 {
		t.Errorf("%d sessions on the server, want the client's alone", n)
	}
}

// TestToolListingOutlivesListChangedNotifications: the listing's own
// session is a session of the server, so a tools/list_changed the server
// sends every session can reach it while it lists. Nobody reads that
// session: the notification must not block on it, or the listing's close
// (which waits for the notification) and every later list hang. Tools
// change beside a client session (so each change is announced) while the
// lister lists in a loop; every listing must end.
func TestToolListingOutlivesListChangedNotifications(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	l := newToolLister(s)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	changes := make(chan struct{})
	go func() { // a tool comes and goes; each change is announced after a pause (the SDK's debounce)
		defer close(changes)
		tool := &mcp.Tool{Name: "flicker", InputSchema: map[string]any{"type": "object"}}
		for i := 0; ctx.Err() == nil && i < 200; i++ {
			s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
			time.Sleep(15 * time.Millisecond)
			s.RemoveTools("flicker")
			time.Sleep(15 * time.Millisecond)
		}
	}()
	listed := make(chan error)
	go func() {
		defer close(listed)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if _, err := l.tools(ctx); err != nil {
				listed <- err
				return
			}
		}
	}()
	select {
	case err, ok := <-listed:
		if ok {
			t.Fatalf("list: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a listing still hangs after 30 s: a tools/list_changed blocked on its session")
	}
	cancel()
	<-changes
}
