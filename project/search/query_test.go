package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestQueryCaps checks each query limit: a repeated term, phrase or tag
// counts once, and past a cap the query is refused with an error naming it.
func TestQueryCaps(t *testing.T) {
	words := func(n int) string {
		var ws []string
		for i := range n {
			ws = append(ws, fmt.Sprintf("w%d", i))
		}
		return strings.Join(ws, " ")
	}
	phrases := func(n int) string {
		var ps []string
		for i := range n {
			ps = append(ps, fmt.Sprintf(`"p%d q%d"`, i, i))
		}
		return strings.Join(ps, " ")
	}
	tags := func(n int) []string {
		var ts []string
		for i := range n {
			ts = append(ts, fmt.Sprintf("t%d", i))
		}
		return ts
	}
	for _, tc := range []struct {
		name    string
		q       Query
		wantErr string
	}{
		{"terms at the cap", Query{Text: words(maxQueryTerms)}, ""},
		{"terms over the cap", Query{Text: words(maxQueryTerms + 1)}, "distinct words"},
		{"one word repeated", Query{Text: strings.Repeat("alpha ", 300)}, ""},
		{"phrases at the cap", Query{Text: phrases(maxPhrases)}, ""},
		{"phrases over the cap", Query{Text: phrases(maxPhrases + 1)}, "quoted phrases"},
		{"one phrase repeated", Query{Text: strings.Repeat(`"zq xv" `, 249)}, ""},
		{"tags at the cap", Query{Text: "x", Tags: tags(maxFilterTags)}, ""},
		{"tags over the cap", Query{Text: "x", Tags: tags(maxFilterTags + 1)}, "filter_tags holds more than"},
		{"one tag repeated, in any case", Query{Text: "x", Tags: append(slices.Repeat([]string{"A"}, 1000), "a ")}, ""},
		{"a tag too long for a file", Query{Text: "x", Tags: []string{strings.Repeat("t", maxTagBytes+1)}}, "bytes"},
	} {
		p, err := compile(tc.q)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
		case err == nil:
			checkPlan(t, p)
		}
	}
	p, _ := compile(Query{Text: strings.Repeat(`"zq xv" `, 249)})
	if len(p.phrases) != 1 || len(p.terms) != 2 {
		t.Errorf("a phrase repeated: %d phrases, terms %v", len(p.phrases), p.terms)
	}
	p, _ = compile(Query{Text: "x", Tags: []string{"A", "a", " A "}})
	if !slices.Equal(p.tags, []string{"a"}) {
		t.Errorf("tags %q, want one", p.tags)
	}
}

// checkPlan fails t when p breaks a cap or holds a duplicate.
func checkPlan(t *testing.T, p *plan) {
	t.Helper()
	if len(p.terms) > maxQueryTerms || len(p.phrases) > maxPhrases || len(p.tags) > maxFilterTags {
		t.Fatalf("plan over its caps: %d terms, %d phrases, %d tags", len(p.terms), len(p.phrases), len(p.tags))
	}
	for _, list := range [][]string{p.terms, p.joined, p.tags} {
		if len(slices.Compact(slices.Sorted(slices.Values(list)))) != len(list) {
			t.Fatalf("duplicates in %q", list)
		}
	}
	seen := map[string]bool{}
	for _, ph := range p.phrases {
		k := strings.Join(ph, " ")
		if seen[k] {
			t.Fatalf("phrase %q twice", k)
		}
		seen[k] = true
	}
}

// FuzzQuery compiles arbitrary queries (text, tags, result count, path
// prefix) and runs those that compile against a small index, each within a
// request's budget.
func FuzzQuery(f *testing.F) {
	root := f.TempDir()
	writeFiles(f, root, baseCorpus)
	ix := openReady(f, openDB(f), "p", root)
	for _, seed := range []struct {
		text, tags string
		n          int
		prefix     string
	}{
		{"closing files", "", 0, ""},
		{`"close the file" retry`, "a,b", 3, ".praxis-os/standards"},
		{strings.Repeat(`"zq xv" `, 249), "", 5, ""},
		{"x", strings.Repeat("t,", 5000), 0, ""},
		{"fill struct fillStruct", "A,a, A", 50, "./x"},
		{`"unbalanced quote`, "", 1, "../up"},
		{"", "", 0, ""},
	} {
		f.Add(seed.text, seed.tags, seed.n, seed.prefix)
	}
	f.Fuzz(func(t *testing.T, text, tags string, n int, prefix string) {
		q := Query{Text: text, N: n, PathPrefix: prefix}
		if tags != "" {
			q.Tags = strings.Split(tags, ",")
		}
		var res *Result
		var err error
		measureAlloc(t, func() {
			res, err = ix.Search(context.Background(), q)
		}).within(t, "a query", requestCPUBudget, requestMemBudget)
		p, perr := compile(q)
		if (err == nil) != (perr == nil) {
			t.Fatalf("search error %v, compile error %v", err, perr)
		}
		if err != nil {
			return
		}
		checkPlan(t, p)
		if len(res.Results) > p.n || res.Total < len(res.Results) {
			t.Fatalf("%d results of %d for n %d", len(res.Results), res.Total, p.n)
		}
	})
}

// TestCompoundPiecesShareAWord checks that a compound's pieces share one
// word's weight beside the whole identifier, while a word that also stands
// alone keeps its full weight.
func TestCompoundPiecesShareAWord(t *testing.T) {
	for _, tc := range []struct {
		text string
		want map[string]float32
	}{
		{"resolv.conf servers", map[string]float32{"resolv.conf": 1, "resolv": 0.5, "conf": 0.5, "server": 1}},
		{"resolv.conf conf", map[string]float32{"resolv.conf": 1, "resolv": 0.5, "conf": 1}},
		{"snake_case_name", map[string]float32{"snake_case_name": 1, "snake": 1.0 / 3, "case": 1.0 / 3, "name": 1.0 / 3}},
		{"plain words", map[string]float32{"plain": 1, "word": 1}},
	} {
		p, err := compile(Query{Text: tc.text})
		if err != nil {
			t.Fatalf("compile(%q): %v", tc.text, err)
		}
		got := map[string]float32{}
		for i, term := range p.terms {
			got[term] = p.weight(i)
		}
		if len(got) != len(tc.want) {
			t.Errorf("compile(%q) terms %v, want %v", tc.text, got, tc.want)
			continue
		}
		for term, w := range tc.want {
			if g, ok := got[term]; !ok || g < w-1e-6 || g > w+1e-6 {
				t.Errorf("compile(%q): weight of %q = %v, want %v (all: %v)", tc.text, term, g, w, got)
			}
		}
	}
}

// TestPhraseCheckOfManySections checks a phrase in more sections than one
// goroutine checks (withPhrases splits them between the cores), built and
// reopened (texts read from the store): the sections that hold the phrase,
// and only they, match, and a required word missing from the index matches
// nothing.
func TestPhraseCheckOfManySections(t *testing.T) {
	files := map[string]string{}
	want := map[string]bool{}
	for i := range 5 * phraseTextsEach {
		rel := fmt.Sprintf(".praxis-os/standards/s%03d.md", i)
		switch i % 3 {
		case 0: // the phrase, once as an identifier's pieces
			files[rel] = fmt.Sprintf("# Doc %d\n\nSome text on the quorum ledger, section %d.\n", i, i)
			if i%2 == 0 {
				files[rel] = fmt.Sprintf("# Doc %d\n\nCall QuorumLedgers here, section %d.\n", i, i)
			}
			want[rel] = true
		case 1: // both words, not next to each other
			files[rel] = fmt.Sprintf("# Doc %d\n\nThe ledger of a quorum, section %d.\n", i, i)
		default: // stop words between them do not count
			files[rel] = fmt.Sprintf("# Doc %d\n\nA quorum of the ledger. Quorum, then ledgers: %d.\n", i, i)
			want[rel] = true
		}
	}
	root, db := standardsDB(t, files)
	built := openReady(t, db, "p", root)
	check := func(ix *Index) {
		t.Helper()
		res, err := ix.Search(context.Background(), Query{Text: `"quorum ledger"`, N: MaxResults})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != len(want) {
			t.Errorf("%d sections match, want %d", res.Total, len(want))
		}
		for _, h := range res.Results {
			if !want[h.File] {
				t.Errorf("%s matches: %q", h.File, h.Content)
			}
		}
		if res, err := ix.Search(context.Background(), Query{Text: `"quorum zzunknown" ledger`}); err != nil || res.Total != 0 {
			t.Errorf("a phrase with a word no section holds: %+v, %v", res, err)
		}
	}
	check(built)
	built.Close()
	check(openReady(t, db, "p", root))
}
