package search

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// multiCorpus answers "make calls give up and try again later" under words
// the question does not use: one phrasing finds one section, another the
// other.
var multiCorpus = map[string]string{
	".praxis-os/standards/net/retries.md":  "# Retries\n\nRetry failed calls with exponential backoff and jitter.\n",
	".praxis-os/standards/net/timeouts.md": "# Timeouts\n\nEvery outbound call carries a deadline.\n",
	".praxis-os/standards/db/pool.md":      "# Pool\n\nConnections are pooled.\n",
}

func TestSeveralPhrasingsAreFused(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, multiCorpus)
	ix := openReady(t, openDB(t), "p", root)
	one := func(q Query) []string { t.Helper(); return files(mustSearch(t, ix, q)) }
	if got := one(Query{Text: "retry backoff"}); !slices.Equal(got, []string{".praxis-os/standards/net/retries.md"}) {
		t.Fatalf("retry backoff alone: %v", got)
	}
	res := mustSearch(t, ix, Query{Text: "retry backoff", Queries: []string{"deadline timeout"}})
	got := files(res)
	slices.Sort(got)
	if !slices.Equal(got, []string{".praxis-os/standards/net/retries.md", ".praxis-os/standards/net/timeouts.md"}) {
		t.Fatalf("fused: %v", got)
	}
	for _, h := range res.Results {
		want := []string{"retry", "backoff"}
		if strings.HasSuffix(h.File, "timeouts.md") {
			want = []string{"deadline", "timeout"}
		}
		if !slices.Equal(h.MatchedTerms, want) {
			t.Errorf("%s: matched %q, want %q", h.File, h.MatchedTerms, want)
		}
	}
	// Queries alone, without query.
	if got := one(Query{Queries: []string{"pooled connections"}}); !slices.Equal(got, []string{".praxis-os/standards/db/pool.md"}) {
		t.Fatalf("queries alone: %v", got)
	}
	// Each phrasing is checked, and their number is capped.
	for _, q := range []Query{
		{Text: "retry", Queries: []string{"the of"}},
		{Text: "a1", Queries: []string{"b2", "c3", "d4", "e5", "f6"}},
		{},
	} {
		if _, err := ix.Search(context.Background(), q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}

func TestSeveralPhrasingsThroughTheTool(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, multiCorpus)
	ix := openReady(t, openDB(t), "p", root)
	cs := connect(t, ix, nil)
	_, out := callSearch(t, cs, map[string]any{"queries": []string{"retry backoff", "deadline"}})
	if out == nil || len(out.Results) != 2 || out.RetrievalMethod != RetrievalMethod {
		t.Fatalf("result %+v", out)
	}
	res, _ := callSearch(t, cs, map[string]any{"n_results": 3})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "empty") {
		t.Fatalf("no query nor queries: %+v", res)
	}
}

func mustSearch(t *testing.T, ix *Index, q Query) *Result {
	t.Helper()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return res
}
