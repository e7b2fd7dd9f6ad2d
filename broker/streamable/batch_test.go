package streamable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// init2025 initializes at the last protocol version that allows batches.
const init2025 = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// bigAnswer is the size of the big tool's text.
const bigAnswer = 1 << 20

// batchServer is a server whose "big" tool answers bigAnswer bytes, with
// counts of its calls and of the most that ran at once.
type batchServer struct {
	mu             sync.Mutex
	calls, running int
	most           int
	seen           map[string]bool // method -> whether it came in a batch
}

func (b *batchServer) counts() (calls, most int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls, b.most
}

// serveBatches serves a batchServer behind a Handler and its Batches
// middleware, and records whether each request a middleware sees came
// in a batch.
func serveBatches(t *testing.T) (url string, inBatch func() map[string]bool, bs *batchServer) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	bs = &batchServer{}
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		bs.mu.Lock()
		bs.calls++
		bs.running++
		bs.most = max(bs.most, bs.running)
		bs.mu.Unlock()
		text := strings.Repeat("x", bigAnswer)
		bs.mu.Lock()
		bs.running--
		bs.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, struct{}{}, nil
	})
	var mu sync.Mutex
	seen := map[string]bool{}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" || method == "tools/list" {
				mu.Lock()
				seen[method] = InBatch(req.GetExtra())
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	h := New(srv, Options{})
	srv.AddReceivingMiddleware(h.Batches)
	url = serveHandler(t, h)
	return url, func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}, bs
}

// batchOf is a batch of n calls of tool, ids 10 on.
func batchOf(n int, tool string) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 10+i, tool)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// postRaw posts body on session sid and returns the status and the whole body.
func postRaw(t *testing.T, url, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderSessionID, sid)
	req.Header.Set(headerBatch, "1") // a client's own is dropped
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func TestBatchOverTheBoundIsRefusedWhole(t *testing.T) {
	url, _, _ := serveBatches(t)
	_, sid, _ := post(t, url, "", init2025)
	status, body := postRaw(t, url, sid, batchOf(MaxBatch+1, "big"))
	if status != http.StatusBadRequest || !strings.Contains(body, "a batch of 33 messages, over the 32 one POST may hold: send at most 32 per batch") {
		t.Fatalf("%d %s", status, body)
	}
}

// TestBatchAnswersPastTheBoundAreLeftOut: a batch's requests run one at
// a time; its answers stop at MaxBatchAnswer bytes, and every later
// answer is an error for its own id, whose request did not run; every
// request is answered once. The requests of a batch are marked for the
// middleware, a single request's are not, even when its client sends the
// mark itself.
func TestBatchAnswersPastTheBoundAreLeftOut(t *testing.T) {
	url, inBatch, bs := serveBatches(t)
	_, sid, _ := post(t, url, "", init2025)
	const n = 12
	status, body := postRaw(t, url, sid, batchOf(n, "big"))
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	ids, full, left := map[int]bool{}, 0, 0
	for line := range strings.Lines(body) {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatal(err)
		}
		if ids[m.ID] {
			t.Fatalf("id %d answered twice", m.ID)
		}
		ids[m.ID] = true
		switch {
		case m.Result != nil:
			full++
		case m.Error != nil && m.Error.Code == CodeLimit && m.Error.Message == "left out: this batch's answers passed 8 MiB; send this request alone":
			left++
		default:
			t.Fatalf("answer %s", data)
		}
	}
	if len(ids) != n || full == 0 || left == 0 || full*bigAnswer > MaxBatchAnswer {
		t.Fatalf("%d answered: %d whole, %d left out", len(ids), full, left)
	}
	if calls, most := bs.counts(); most != 1 || calls > full+2 {
		t.Fatalf("%d calls ran (at most %d at once) for %d whole answers", calls, most, full)
	}
	if got := inBatch(); !got["tools/call"] {
		t.Fatalf("the batch's requests were not marked: %v", got)
	}
	if status, body := postRaw(t, url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	if got := inBatch(); got["tools/list"] {
		t.Fatal("a single request is marked as a batch's")
	}
}
