package project

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
