package finder

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/search"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkFinder measures finder mode on a project hosting
// server-everything, server-memory, server-filesystem and the fixture
// server of 100 tools beside Berth's own (rag and workflow groups), all in
// one run:
//
//   - tokens of tools/list in each mode, as a client sends it to the
//     model (ListingTokens: name, description and input schema):
//     tokens-all, tokens-finder, finder/all (goal <= 0.1); and of the
//     whole answer's tools as JSON (json-tokens-*);
//
//   - the task set (testdata/tasks.txt): find_tools's hits@1 and hits@3
//     (goals 45 and 54 of 60) and a plain BM25 over names and
//     descriptions's (bm25-hits1, bm25-hits3); the held-out tasks' too;
//
//   - find_tools's latency over 500 tools (the project's and 349 more):
//     the ranking alone (rank-p50-us) and the whole call through an MCP
//     session (find-p50-us; goal <= 1000), against a call of a tool that
//     does nothing through the same session (ping-p50-us), alternated;
//
//   - call_tool against a direct tools/call of the same hosted tool,
//     alternated: call-direct-p50-us, call-tool-p50-us and what call_tool
//     adds (call-tool-added-us; goal <= 50).
//
//     go test ./broker/finder -run '^$' -bench Finder -benchtime 1x
func BenchmarkFinder(b *testing.B) {
	ctx := testCtx(b, 10*time.Minute)
	f := openFixture(b, realDecls(b, b.TempDir()))
	f.waitRunning(b, ctx)
	all := f.connectMode(b, ModeAll)
	fm := f.connectMode(b, ModeFinder)
	allTools, finderTools := listTools(b, ctx, all), listTools(b, ctx, fm)
	ta, tf := ListingTokens(allTools), ListingTokens(finderTools)
	b.ReportMetric(float64(len(allTools)), "tools-all")
	b.ReportMetric(float64(len(finderTools)), "tools-finder")
	b.ReportMetric(float64(ta), "tokens-all")
	b.ReportMetric(float64(tf), "tokens-finder")
	b.ReportMetric(float64(tf)/float64(ta), "finder/all")
	ja, jf := jsonTokens(b, allTools), jsonTokens(b, finderTools)
	b.ReportMetric(float64(ja), "json-tokens-all")
	b.ReportMetric(float64(jf), "json-tokens-finder")
	b.ReportMetric(float64(jf)/float64(ja), "json-finder/all")

	c := catalogOf(b, allTools)
	plain := newPlainBM25(allTools)
	finder := func(q string, n int) []string {
		found, _ := c.Find(q, n)
		out := make([]string, len(found))
		for i, t := range found {
			out[i] = t.Tool.Name
		}
		return out
	}
	for _, set := range []struct{ prefix, file string }{{"", "testdata/tasks.txt"}, {"heldout-", "testdata/tasks-heldout.txt"}} {
		tasks := readTasks(b, set.file)
		f1, f3, _ := hits(b, finder, tasks)
		b1, b3, _ := hits(b, plain.rank, tasks)
		b.ReportMetric(float64(f1), set.prefix+"hits1")
		b.ReportMetric(float64(f3), set.prefix+"hits3")
		b.ReportMetric(float64(b1), set.prefix+"bm25-hits1")
		b.ReportMetric(float64(b3), set.prefix+"bm25-hits3")
	}

	// 500 tools: the project's, and copies of the fixture's under other
	// server names.
	big := slices.Clone(allTools)
	for i := 0; len(big) < 500; i++ {
		for _, t := range allTools {
			if len(big) == 500 {
				break
			}
			if srv, name, ok := cutServer(t.Name); ok && srv == "workspace" {
				cp := *t
				cp.Name = fmt.Sprintf("workspace%d%s%s", i+2, Sep, name)
				big = append(big, &cp)
			}
		}
	}
	tasks := readTasks(b, "testdata/tasks.txt")
	bigFinder := New(Options{Tools: func(context.Context) ([]*mcp.Tool, error) { return big, nil }, Config: f.eng.Config})
	b.Cleanup(bigFinder.Close)
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	// ping is the baseline: an MCP round trip to a tool that does nothing.
	mcp.AddTool(srv, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	srv.AddReceivingMiddleware(bigFinder.Middleware)
	_, bigSession := connectTo(b, srv, "bench", nil)
	if v := bigFinder.mustView(b); v.cat.Len() != 500 {
		b.Fatalf("catalog of %d tools", v.cat.Len())
	}
	var rank, find, ping []time.Duration
	for i := range max(b.N, 1) * 600 {
		q := tasks[i%len(tasks)].text
		tp := time.Now()
		if res, err := bigSession.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err != nil || res.IsError {
			b.Fatalf("ping: %v %s", err, brokertest.ResultText(res))
		}
		t0 := time.Now()
		if _, err := bigFinder.Find(ctx, q, DefaultResults); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := bigSession.CallTool(ctx, &mcp.CallToolParams{Name: FindTools, Arguments: map[string]any{"query": q}})
		if err != nil || res.IsError {
			b.Fatalf("find_tools: %v %s", err, brokertest.ResultText(res))
		}
		rank, find, ping = append(rank, t1.Sub(t0)), append(find, time.Since(t1)), append(ping, t0.Sub(tp))
	}
	b.ReportMetric(float64(median(rank).Nanoseconds())/1000, "rank-p50-us")
	b.ReportMetric(float64(median(find).Nanoseconds())/1000, "find-p50-us")
	b.ReportMetric(float64(median(ping).Nanoseconds())/1000, "ping-p50-us")

	args := map[string]any{"severity": "critical"}
	direct := func() {
		if res, err := all.CallTool(ctx, &mcp.CallToolParams{Name: "workspace__list_alerts", Arguments: args}); err != nil || res.IsError {
			b.Fatalf("direct call: %v %s", err, brokertest.ResultText(res))
		}
	}
	through := func() {
		res, err := all.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": "workspace__list_alerts", "arguments": args}})
		if err != nil || res.IsError {
			b.Fatalf("call_tool: %v %s", err, brokertest.ResultText(res))
		}
	}
	for range 50 { // warm both
		direct()
		through()
	}
	var td, tc []time.Duration
	for range max(b.N, 1) * 2000 {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		through()
		td, tc = append(td, t1.Sub(t0)), append(tc, time.Since(t1))
	}
	md, mc := median(td), median(tc)
	b.ReportMetric(float64(md.Nanoseconds())/1000, "call-direct-p50-us")
	b.ReportMetric(float64(mc.Nanoseconds())/1000, "call-tool-p50-us")
	b.ReportMetric(float64((mc-md).Nanoseconds())/1000, "call-tool-added-us")
}

func cutServer(name string) (server, tool string, ok bool) {
	for i := 0; i+len(Sep) <= len(name); i++ {
		if name[i:i+len(Sep)] == Sep {
			return name[:i], name[i+len(Sep):], true
		}
	}
	return "", name, false
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// jsonTokens are the tokens of the whole tools/list answer's tools as
// JSON, output schemas, annotations and _meta included.
func jsonTokens(t testing.TB, tools []*mcp.Tool) int {
	raw, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return search.EstimateTokens(string(raw))
}

// connectMode opens a session that asks for mode, as ?tools= does.
func (f *fixture) connectMode(t testing.TB, mode Mode) *mcp.ClientSession {
	t.Helper()
	ctx := WithMode(testCtx(t, 10*time.Minute), mode)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.eng.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
