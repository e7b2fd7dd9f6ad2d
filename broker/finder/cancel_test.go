package finder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/finder/findertest"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heard is a client connection that keeps the ids of the tools/call
// requests it sends and of the answers it reads.
type heard struct {
	mcp.Connection
	mu      sync.Mutex
	calls   []jsonrpc.ID
	answers []jsonrpc.ID
}

func (h *heard) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		h.mu.Lock()
		h.calls = append(h.calls, req.ID)
		h.mu.Unlock()
	}
	return h.Connection.Write(ctx, msg)
}

func (h *heard) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := h.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		h.mu.Lock()
		h.answers = append(h.answers, resp.ID)
		h.mu.Unlock()
	}
	return msg, err
}

// heardSoFar are the ids of the calls sent and of the answers read.
func (h *heard) heardSoFar() (calls, answers []jsonrpc.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls), slices.Clone(h.answers)
}

type heardTransport struct {
	mcp.Transport
	conn *heard
}

func (t *heardTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &heard{Connection: c}
	return t.conn, nil
}

// TestCancelledCallToolIsNotAnswered: a client in finder mode over
// WebSocket (the shim's way in) cancels a call_tool of a hosted tool that
// blocks: the hosted server's call is cancelled (its tool writes its
// file), the cancelled call gets no answer, as the MCP spec asks, and the
// session's next call is answered.
func TestCancelledCallToolIsNotAnswered(t *testing.T) {
	exe, env := findertest.PluginsCommand(t)
	f := openFixture(t, []hosted.Decl{eager(hosted.Decl{Name: "plugins", Origin: hosted.OriginUser, Server: validServer(exe, nil, env)})})
	ctx := testCtx(t, 2*time.Minute)
	f.waitRunning(t, ctx)
	ws := mcpws.Handler(f.eng.Server(), nil, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws.ServeHTTP(w, r.WithContext(WithMode(r.Context(), ModeFinder)))
	}))
	t.Cleanup(srv.Close)
	tr := &heardTransport{Transport: &mcpws.ClientTransport{URL: "ws" + strings.TrimPrefix(srv.URL, "http")}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "canceller", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	marker := filepath.Join(t.TempDir(), "cancelled")
	callCtx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: CallTool,
			Arguments: map[string]any{"name": "plugins" + Sep + findertest.Wait, "arguments": map[string]any{"file": marker}}})
		errc <- err
	}()
	brokertest.Eventually(t, "the hosted tool running", func() bool {
		_, err := os.Stat(marker + ".started")
		return err == nil
	})
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	brokertest.Eventually(t, "the hosted server's call cancelled (its file written)", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: FindTools, Arguments: map[string]any{"query": "wait until cancelled"}})
	if err != nil || res.IsError {
		t.Fatalf("the call after the cancelled one: %v %+v", err, res)
	}
	calls, answers := tr.conn.heardSoFar()
	if len(calls) != 2 {
		t.Fatalf("the client sent %d tools/call, want 2", len(calls))
	}
	if slices.Contains(answers, calls[0]) {
		t.Fatalf("the cancelled call (id %v) was answered; answers heard: %v", calls[0].Raw(), answers)
	}
	if !slices.Contains(answers, calls[1]) {
		t.Fatalf("the next call (id %v) is not among the answers heard: %v", calls[1].Raw(), answers)
	}
}
