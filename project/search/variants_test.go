package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A morphological variant of a query word (a word of the index sharing its
// first six letters that the stemmer keeps apart: "deterministic" for
// "determine") lifts a section the query's own words matched, and brings in
// none of its own; the same holds once the index is reopened from the
// store, its postings still encoded.
func TestVariantsOnlyAddToMatchedSections(t *testing.T) {
	root, db := standardsDB(t, map[string]string{
		".praxis-os/standards/a.md": "# Alpha\n\nThe order is fixed here.\n",
		".praxis-os/standards/b.md": "# Beta\n\nThe order is deterministic here.\n",
		".praxis-os/standards/c.md": "# Gamma\n\nThe output is deterministic.\n",
	})
	check := func(ix *Index) {
		t.Helper()
		got := files(search(t, ix, "determine the order"))
		if want := []string{".praxis-os/standards/b.md", ".praxis-os/standards/a.md"}; !slices.Equal(got, want) {
			t.Errorf("determine the order: %v, want %v (the variant lifts b.md, and brings in no c.md)", got, want)
		}
	}
	ix := openReady(t, db, "p", root)
	check(ix)
	ix.Close()
	check(openReady(t, db, "p", root))
}

// The rarest terms a prefix's cache keeps give the variants a scan of
// every term sharing the prefix gives: with the query's own words among
// the rarest, with more terms sharing the prefix than the cache keeps, and
// again once the cache holds the prefix.
func TestRarestCacheChoosesAsAFullScan(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	// Twelve words sharing "config", the rarer the later: config0 in one
	// file, config11 in twelve.
	for f := range 12 {
		text := "# Section\n\n"
		for w := 0; w <= f; w++ {
			text += fmt.Sprintf("configz%c ", 'a'+11-w)
		}
		files[fmt.Sprintf(".praxis-os/standards/f%02d.md", f)] = text + "\n"
	}
	writeFiles(t, root, files)
	ix := openReady(t, openDB(t), "p", root)
	s := ix.snap.Load()
	if s.rare == nil {
		t.Fatal("a ready index's snapshot keeps no cache of rarest terms")
	}
	queries := []string{"configza", "configzb configza", "configza configzb configzc configzd configze configzf configzg configzh configzi", "configzl"}
	for _, q := range queries {
		p, err := compile(Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		// Every term of the dictionary, its count, the rarest first.
		var want []string
		for _, term := range p.terms {
			var all []variant
			for id := range uint32(ix.dict.size()) {
				v := variant{ix.dict.term(id), s.docFreq(id)}
				if v.df > 0 && strings.HasPrefix(v.t, term[:6]) && !slices.Contains(p.terms, v.t) && !slices.Contains(want, v.t) {
					all = append(all, v)
				}
			}
			slices.SortFunc(all, func(a, b variant) int {
				if a.before(b) {
					return -1
				}
				return 1
			})
			if len(all) > 0 {
				want = append(want, all[0].t)
			}
		}
		for round := range 2 {
			if got := ix.withVariants(s, p).variants; !slices.Equal(got, want) {
				t.Errorf("%q, round %d: variants %v with the cache, %v from a full scan", q, round, got, want)
			}
		}
		if len(want) == 0 {
			t.Errorf("%q: no variant at all; the test's words do not share a prefix", q)
		}
	}
}

// A query word the stemmer shortened ("resolve" to resolv) does not match
// the first piece of a dotted name spelled like its stem (the resolv of
// resolv.conf, a file's name, no form of the word), while the word spelled
// like the piece ("resolv", or the whole "resolv.conf", which ranks the
// name's sections first) still does; a section that holds the word itself
// beside the name keeps its match.
func TestFileNamePiecesAreNotStems(t *testing.T) {
	root, db := standardsDB(t, map[string]string{
		".praxis-os/standards/conf.md":  "# Upstreams\n\nRead resolv.conf, then resolv.conf again.\n",
		".praxis-os/standards/names.md": "# Names\n\nNames resolve to addresses.\n",
		".praxis-os/standards/both.md":  "# Both\n\nThe resolv.conf file says how names resolve.\n",
	})
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"how to resolve", []string{".praxis-os/standards/names.md", ".praxis-os/standards/both.md"}},
		{"resolv", []string{".praxis-os/standards/both.md", ".praxis-os/standards/conf.md", ".praxis-os/standards/names.md"}},
		{"resolv.conf", []string{".praxis-os/standards/conf.md", ".praxis-os/standards/both.md"}},
	} {
		ix := openReady(t, db, "p", root)
		got := files(search(t, ix, tc.q))
		if len(got) > len(tc.want) {
			got = got[:len(tc.want)]
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("%q: first results %v, want %v", tc.q, got, want)
		}
		ix.Close()
	}
	// The words a result names as matched leave out the file name.
	writeFiles(t, root, map[string]string{".praxis-os/standards/conf.md": "# Upstreams\n\nRead resolv.conf for the names.\n"})
	ix := openReady(t, db, "p", root)
	defer ix.Close()
	res, err := ix.Search(context.Background(), Query{Text: "resolve names", N: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Results {
		if h.File == ".praxis-os/standards/conf.md" && !slices.Equal(h.MatchedTerms, []string{"names"}) {
			t.Errorf("conf.md matched %v for \"resolve names\", want [names]: its resolv is the file name's", h.MatchedTerms)
		}
	}
	if !slices.ContainsFunc(res.Results, func(h Hit) bool { return h.File == ".praxis-os/standards/conf.md" }) {
		t.Errorf("\"resolve names\" does not find conf.md by its names: %v", files(res))
	}
}

// The dotted names a query word's stem is the first piece of are
// remembered per state of the index: a search after an edit that brings
// in such a name leaves the name's piece out, though a search before it
// found no such name.
func TestFileNamePiecesAfterAnEdit(t *testing.T) {
	root, db := standardsDB(t, map[string]string{
		".praxis-os/standards/names.md": "# Names\n\nNames resolve to addresses.\n",
	})
	ix := openReady(t, db, "p", root)
	defer ix.Close()
	for range 2 {
		if got := files(search(t, ix, "how to resolve")); !slices.Equal(got, []string{".praxis-os/standards/names.md"}) {
			t.Fatalf("before the edit: %v, want names.md", got)
		}
	}
	rel := ".praxis-os/standards/conf.md"
	writeFiles(t, root, map[string]string{rel: "# Upstreams\n\nRead resolv.conf, then resolv.conf again.\n"})
	if err := ix.Apply(context.Background(), []string{rel}); err != nil {
		t.Fatal(err)
	}
	if got := files(search(t, ix, "resolv.conf")); !slices.Contains(got, rel) {
		t.Fatalf("the edit is not searchable: resolv.conf finds %v", got)
	}
	if got := files(search(t, ix, "how to resolve")); slices.Contains(got, rel) {
		t.Errorf("after the edit, \"how to resolve\" finds %v: conf.md's resolv is the file name's", got)
	}
}
