package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// praxisCorpus has files labelled every way search_standards filters on.
var praxisCorpus = map[string]string{
	".praxis-os/standards/testing/mocks.md":          "---\ntitle: Mocks\ntags: [Testing, mocking]\nphase: 2\n---\n# Mocks\n\nReplace the network with a fake transport.\n",
	".praxis-os/standards/testing/style.md":          "---\ntags: testing, style\n---\n# Style\n\nKeep each fake transport small.\n",
	".praxis-os/standards/plain.md":                  "# Plain\n\nA fake transport with no labels.\n",
	".praxis-os/workflows/w_v1/phases/1/task-1-x.md": "# Task\n\nWrite the fake transport first.\n",
}

func TestToolAcceptsPraxisFilters(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, praxisCorpus)
	cs := connect(t, openReady(t, openDB(t), "p", root), nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"no filter", map[string]any{"query": "fake transport"}, []string{
			".praxis-os/standards/plain.md", ".praxis-os/standards/testing/mocks.md",
			".praxis-os/standards/testing/style.md", ".praxis-os/workflows/w_v1/phases/1/task-1-x.md"}},
		{"phase from front matter", map[string]any{"query": "fake transport", "filter_phase": 2}, []string{".praxis-os/standards/testing/mocks.md"}},
		{"phase from the phases folder", map[string]any{"query": "fake transport", "filter_phase": 1}, []string{".praxis-os/workflows/w_v1/phases/1/task-1-x.md"}},
		{"phase null is no filter", map[string]any{"query": "fake transport", "filter_phase": nil, "filter_tags": nil}, []string{
			".praxis-os/standards/plain.md", ".praxis-os/standards/testing/mocks.md",
			".praxis-os/standards/testing/style.md", ".praxis-os/workflows/w_v1/phases/1/task-1-x.md"}},
		{"one tag, any case, list or comma string", map[string]any{"query": "fake transport", "filter_tags": []string{"TESTING"}}, []string{
			".praxis-os/standards/testing/mocks.md", ".praxis-os/standards/testing/style.md"}},
		{"every tag must be there", map[string]any{"query": "fake transport", "filter_tags": []string{"testing", "style"}}, []string{".praxis-os/standards/testing/style.md"}},
		{"no file has the tag", map[string]any{"query": "fake transport", "filter_tags": []string{"nope"}}, nil},
		{"phase and tags together", map[string]any{"query": "fake transport", "filter_phase": 2, "filter_tags": []string{"mocking"}}, []string{".praxis-os/standards/testing/mocks.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out := callSearch(t, cs, tc.args)
			if out == nil {
				t.Fatalf("tool error: %+v", res.Content)
			}
			got := files(out)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || out.Total != len(tc.want) {
				t.Fatalf("files %v (total %d), want %v", got, out.Total, tc.want)
			}
			if out.RetrievalMethod != "bm25f" {
				t.Errorf("retrieval_method = %q", out.RetrievalMethod)
			}
			sum := 0
			for _, h := range out.Results {
				if h.Tokens <= 0 || h.Tokens != estimateTokens(h.Content) {
					t.Errorf("%s: tokens %d for %d bytes of content", h.File, h.Tokens, len(h.Content))
				}
				sum += h.Tokens
				if h.File == ".praxis-os/standards/testing/mocks.md" && (h.Phase == nil || *h.Phase != 2 || !slices.Equal(h.Tags, []string{"testing", "mocking"})) {
					t.Errorf("mocks.md labels: tags %v phase %v", h.Tags, h.Phase)
				}
			}
			if out.TotalTokens != sum {
				t.Errorf("total_tokens %d, results sum to %d", out.TotalTokens, sum)
			}
		})
	}
}

func TestToolRefusesBadPraxisFilters(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, praxisCorpus)
	cs := connect(t, openReady(t, openDB(t), "p", root), nil)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "fake", "filter_phase": -1}, "minimum"},
		{map[string]any{"query": "fake", "filter_phase": "two"}, "filter_phase"},
		{map[string]any{"query": "fake", "filter_tags": "testing"}, "filter_tags"},
		{map[string]any{"query": "fake", "filter_tags": []string{" "}}, "empty tag"},
	} {
		res, out := callSearch(t, cs, tc.args)
		if out != nil || !res.IsError {
			t.Errorf("%v: want a tool error, got %+v", tc.args, out)
			continue
		}
		if text := brokertest.ResultText(res); !strings.Contains(text, tc.want) {
			t.Errorf("%v: error %q does not mention %q", tc.args, text, tc.want)
		}
	}
}

func TestFileLabels(t *testing.T) {
	for _, tc := range []struct {
		rel, fm string
		tags    []string
		phase   int
	}{
		{"a.md", "tags: [A, b, a]\nphase: 3", []string{"a", "b"}, 3},
		{"a.md", "tags:\n  - x\n  - Y\n", []string{"x", "y"}, -1},
		{"a.md", "tags: one, two ,", []string{"one", "two"}, -1},
		{"w/phases/4/task.md", "", nil, 4},
		{"w/phases/4/task.md", "phase: 1", nil, 1},
		{"w/phases/x/task.md", "phase: -2", nil, -1},
		{"a.md", "tags: [unclosed", nil, -1},
		{"phases/7/a.md", "tags: {a: b}", nil, 7},
	} {
		l := fileLabels(tc.rel, tc.fm)
		if !slices.Equal(l.tags, tc.tags) || l.phase != tc.phase {
			t.Errorf("fileLabels(%q, %q) = %v %d, want %v %d", tc.rel, tc.fm, l.tags, l.phase, tc.tags, tc.phase)
		}
	}
}

func FuzzFileLabels(f *testing.F) {
	f.Add("a/phases/2/b.md", "tags: [a, B]\nphase: 2")
	f.Add("x.md", "tags: a, b")
	f.Add("x.md", "phase: [1]\ntags: {}")
	f.Fuzz(func(t *testing.T, rel, fm string) {
		l := fileLabels(rel, fm)
		if l.phase < -1 {
			t.Fatalf("phase %d", l.phase)
		}
		for _, tag := range l.tags {
			if tag == "" || tag != strings.ToLower(strings.TrimSpace(tag)) {
				t.Fatalf("tag %q is not trimmed and lowercased", tag)
			}
		}
	})
}

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"internationalization", 2},
		{"a, b.", 4},
		{"12345", 2},
		{"line\nline\n", 3},
		{"日本", 2},
	} {
		if got := estimateTokens(tc.s); got != tc.want {
			t.Errorf("estimateTokens(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
