package search

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves ix's tools over in-memory transports and returns a client
// session. progress, when not nil, receives the client's progress
// notifications.
func connect(t *testing.T, ix *Index, progress chan<- *mcp.ProgressNotificationParams) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "berth-test", Version: "0"}, nil)
	AddTools(server, ix)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "0"}, opts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callSearch(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, *Result) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: args})
	if err != nil {
		t.Fatalf("call %v: protocol error %v", args, err)
	}
	if res.IsError {
		return res, nil
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out Result
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return res, &out
}

func TestToolSchemaAndResults(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	ix := openReady(t, openDB(t), "p", root)
	cs := connect(t, ix, nil)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != ToolName {
		t.Fatalf("tools: %+v", tools.Tools)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	for _, want := range []string{`"queries"`, `"maxItems":5`, `"n_results"`, `"default":5`, `"minimum":1`, `"maximum":50`, `"path_prefix"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}
	if !strings.Contains(tools.Tools[0].Description, "higher-is-better") {
		t.Error("description does not say relevance_score is higher-is-better")
	}

	res, out := callSearch(t, cs, map[string]any{"query": "closing"})
	if out == nil || len(out.Results) != 1 || out.Total != 1 {
		t.Fatalf("result %+v", res)
	}
	h := out.Results[0]
	if h.File != ".praxis-os/standards/a.md" || h.Section != "Alpha" || h.Lines != [2]int{1, 3} || h.RelevanceScore <= 0 || !strings.Contains(h.Content, "Closing file handles") {
		t.Fatalf("hit %+v", h)
	}
	// The text content carries the same JSON, with praxis-os field names.
	text := res.Content[0].(*mcp.TextContent).Text
	for _, field := range []string{`"results"`, `"file"`, `"section"`, `"lines"`, `"relevance_score"`, `"content"`, `"total"`, `"query_time_ms"`} {
		if !strings.Contains(text, field) {
			t.Errorf("text result lacks %s: %s", field, text)
		}
	}

	_, out = callSearch(t, cs, map[string]any{"query": "deploy", "n_results": 1, "path_prefix": ".praxis-os/workflows"})
	if out == nil || len(out.Results) != 1 || out.Results[0].File != ".praxis-os/workflows/w/phase.md" {
		t.Fatalf("prefix search: %+v", out)
	}
}

func TestToolErrorsAreResults(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	ix := openReady(t, openDB(t), "p", root)
	cs := connect(t, ix, nil)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": ""}, "query is empty"},
		{map[string]any{"query": "   "}, "query is empty"},
		{map[string]any{}, "query"},
		{map[string]any{"query": "x", "n_results": 0}, "minimum"},
		{map[string]any{"query": "x", "n_results": 51}, "maximum"},
		{map[string]any{"query": "x", "n_results": "five"}, "n_results"},
		{map[string]any{"query": "x", "path_prefix": "../elsewhere"}, "path_prefix"},
		{map[string]any{"query": "x", "unknown": true}, "unknown"},
	} {
		res, _ := callSearch(t, cs, tc.args)
		if !res.IsError {
			t.Errorf("%v: not an error result", tc.args)
			continue
		}
		msg := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: error %q does not mention %q", tc.args, msg, tc.want)
		}
	}
}

func TestToolReportsProgressDuringFirstBuild(t *testing.T) {
	root := t.TempDir()
	corpus := map[string]string{}
	for i := range 300 { // more than one batch
		corpus[fmt.Sprintf(".praxis-os/standards/f%03d.md", i)] = fmt.Sprintf("# File %d\n\nGiraffe number %d.\n", i, i)
	}
	writeFiles(t, root, corpus)
	gate := make(chan struct{})
	var once sync.Once
	ix, err := Open(context.Background(), Options{
		Root: root, Sources: defaultSources, DB: openDB(t), ProjectID: "p",
		beforeBatch: func() { <-gate },
	})
	if err != nil {
		t.Fatal(err)
	}
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() { ix.Close() })

	progress := make(chan *mcp.ProgressNotificationParams, 100)
	cs := connect(t, ix, progress)
	t.Cleanup(release) // runs before the sessions close: an open call would block them
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		params := &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"query": "giraffe", "n_results": 50}}
		params.SetProgressToken("tok-1")
		res, err := cs.CallTool(context.Background(), params)
		answers <- answer{res, err}
	}()

	// The build is held at its first batch: the call waits and reports.
	var first *mcp.ProgressNotificationParams
	select {
	case first = <-progress:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification while the first build runs")
	}
	if first.ProgressToken != "tok-1" || first.Total != 300 || first.Progress != 0 || !strings.Contains(first.Message, "indexing") {
		t.Fatalf("first notification %+v", first)
	}
	if st := ix.Status(); st.State != StateIndexing || st.Progress.Total != 300 {
		t.Fatalf("status while indexing: %+v", st)
	}
	select {
	case a := <-answers:
		t.Fatalf("answered before the build finished: %+v", a)
	default:
	}
	release()
	var a answer
	select {
	case a = <-answers:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the build finished")
	}
	if a.err != nil || a.res.IsError {
		t.Fatalf("answer: %v %+v", a.err, a.res)
	}
	raw, _ := json.Marshal(a.res.StructuredContent)
	var out Result
	json.Unmarshal(raw, &out)
	if out.Total != 300 || len(out.Results) != 50 {
		t.Fatalf("total %d, %d results; want 300 and 50", out.Total, len(out.Results))
	}
	// Progress only ever increased.
	last := first.Progress
	for len(progress) > 0 {
		p := <-progress
		if p.Progress <= last {
			t.Fatalf("progress went from %v to %v", last, p.Progress)
		}
		last = p.Progress
	}

	// A call without a progress token gets no notifications.
	callSearch(t, cs, map[string]any{"query": "giraffe"})
	if len(progress) != 0 {
		t.Fatal("notification sent without a progress token")
	}
}
