package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// minimalRPC is the floor: a net/http handler that decodes a JSON-RPC
// request and answers it with a small result.
func minimalRPC(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...), `,"result":{"content":[{"type":"text","text":"ok"}]}}`...))
}

type dateOut struct {
	ISODateTime string `json:"iso_datetime"`
	Unix        int64  `json:"unix"`
}

// BenchmarkHTTPPath is one tools/call over loopback HTTP with the bench's
// plain client, in turn on each subject: a minimal net/http JSON-RPC
// handler (the floor), and through the table's fast path a tool of the
// go-sdk's mcp.AddTool, the same tool of typedtool.Add and a plain tool.
// It reports each one's p50 and its ratio to the floor's.
func BenchmarkHTTPPath(b *testing.B) {
	typed := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(typed, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, dateOut, error) {
		now := time.Now()
		return nil, dateOut{now.Format(time.RFC3339), now.Unix()}, nil
	})
	typedtool.Add(typed, &mcp.Tool{Name: "o"}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, dateOut, error) {
		now := time.Now()
		return nil, dateOut{now.Format(time.RFC3339), now.Unix()}, nil
	})
	typed.AddTool(&mcp.Tool{Name: "p", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := newHandler(typed, Options{EventStore: NewEventStore(), Track: tracked()})
	defer h.Shutdown() // after the server's Close: the session's goroutines end with it
	berth := httptest.NewServer(h)
	defer berth.Close()
	floor := httptest.NewServer(http.HandlerFunc(minimalRPC))
	defer floor.Close()
	hc := &http.Client{}
	sid := brokertest.OpenRPCSession(b, hc, berth.URL)
	subjects := []struct{ name, url, sid, tool string }{
		{"floor", floor.URL, "-", "t"},
		{"sdk-typed", berth.URL, sid, "t"},
		{"typedtool", berth.URL, sid, "o"},
		{"plain", berth.URL, sid, "p"},
	}
	lat := make([][]time.Duration, len(subjects))
	id := 10
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for k := range subjects {
			sub := subjects[(i+k)%len(subjects)] // each subject in every position in turn
			id++
			start := time.Now()
			brokertest.PostRPC(b, hc, sub.url, sub.sid, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"`+sub.tool+`","arguments":{}}}`))
			lat[(i+k)%len(subjects)] = append(lat[(i+k)%len(subjects)], time.Since(start))
		}
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds())
	}
	floorP50 := p50(lat[0])
	for k, sub := range subjects {
		v := p50(lat[k])
		b.ReportMetric(v, sub.name+"-p50-us")
		if k > 0 {
			b.ReportMetric(v/floorP50, sub.name+"/floor")
		}
	}
}
