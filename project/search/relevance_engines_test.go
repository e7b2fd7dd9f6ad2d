package search

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/berth-dev/berth/store"
	"github.com/blevesearch/bleve/v2"
)

// relEngine ranks the sections of one project for the relevance suite.
type relEngine interface {
	// rank returns the keys ("file#section", file relative to the project
	// root) of the best n sections for q, best first.
	rank(tb testing.TB, q string, n int) []string
	close()
}

// relBerth is this package's index, opened over a project root.
type relBerth struct {
	db *store.DB
	ix *Index
}

// useRanking switches the engine's query-time ranking and recomputes the
// length normalizations that depend on it (the added length, b).
func (e *relBerth) useRanking(rk *ranking) {
	e.ix.rk = rk
	e.ix.snap.Load().computeNorms(rk)
}

func newRelBerth(tb testing.TB, root string, sources []string, rk *ranking) *relBerth {
	tb.Helper()
	db, err := store.Open(filepath.Join(tb.TempDir(), "berth.db"), time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := Open(context.Background(), Options{Root: root, Sources: sources, DB: db, ProjectID: "rel", ranking: rk})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ix.WaitReady(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return &relBerth{db: db, ix: ix}
}

func (e *relBerth) rank(tb testing.TB, q string, n int) []string {
	return e.rankIn(tb, q, n, "")
}

// rankPhrasings ranks q and its other phrasings in one search, as
// search_standards' queries do.
func (e *relBerth) rankPhrasings(tb testing.TB, q string, more []string, n int) []string {
	return e.ranked(tb, Query{Text: q, Queries: more, N: n})
}

// prefixRanker is an engine that can limit a search to a folder.
type prefixRanker interface {
	rankIn(tb testing.TB, q string, n int, prefix string) []string
	filtered() bool
}

// filteredBerth searches each set's queries within the set's folder only.
type filteredBerth struct{ *relBerth }

func (filteredBerth) filtered() bool { return true }
func (*relBerth) filtered() bool     { return false }

func (e *relBerth) rankIn(tb testing.TB, q string, n int, prefix string) []string {
	return e.ranked(tb, Query{Text: q, N: n, PathPrefix: prefix})
}

// ranked is the keys of q's results, best first.
func (e *relBerth) ranked(tb testing.TB, q Query) []string {
	res, err := e.ix.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("%q: %v", q.Text, err)
	}
	out := make([]string, len(res.Results))
	for i, h := range res.Results {
		out[i] = h.File + "#" + h.Section
	}
	return out
}

func (e *relBerth) close() {
	e.ix.Close()
	e.db.Close()
}

// relBM25 is a plain textbook BM25 (k1 1.2, b 0.75) over the same sections:
// lowercase words, English stop words dropped, a crude suffix stemmer, the
// heading path's words counted headWeight times (relHeadWeight: three). It
// is the baseline a search engine should beat. With rm3 set it adds RM3
// feedback: the 10 most likely terms of its top 5 sections, weighted half
// and half with the query.
type relBM25 struct {
	rm3   bool
	docs  []relDoc
	tfs   []map[string]int
	lens  []float64
	avg   float64
	df    map[string]int
	total float64
}

// relHeadWeight is how many times the textbook BM25 counts a word of a
// section's heading path.
const relHeadWeight = 3

func newRelBM25(docs []relDoc) *relBM25 {
	e := &relBM25{docs: docs, df: map[string]int{}}
	var sum float64
	for _, d := range docs {
		tf := map[string]int{}
		n := 0
		for _, w := range plainWords(strings.Join(d.heading, " ")) {
			tf[w] += relHeadWeight
			n += relHeadWeight
		}
		for _, w := range plainWords(d.body) {
			tf[w]++
			n++
		}
		for w := range tf {
			e.df[w]++
		}
		e.tfs = append(e.tfs, tf)
		e.lens = append(e.lens, float64(n))
		sum += float64(n)
	}
	e.total = float64(len(docs))
	e.avg = sum / max(1, e.total)
	return e
}

// plainWords splits on anything but letters and digits, lowercases, drops
// stop words and strips a few English suffixes.
func plainWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if isStopWord(w) {
			continue
		}
		for _, suf := range []string{"ing", "ed", "es", "s"} {
			if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
				w = w[:len(w)-len(suf)]
				break
			}
		}
		out = append(out, w)
	}
	return out
}

// bm25Score is one section's score.
type bm25Score struct {
	i int
	s float64
}

// scoreAll ranks every section for query term weights qw.
func (e *relBM25) scoreAll(qw map[string]float64) []bm25Score {
	var scores []bm25Score
	terms := slices.Sorted(maps.Keys(qw)) // summed in a fixed order
	for i, tf := range e.tfs {
		s := 0.0
		for _, w := range terms {
			qwt := qw[w]
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(e.df[w])
			idf := math.Log(1 + (e.total-df+0.5)/(df+0.5))
			s += qwt * idf * f * 2.2 / (f + 1.2*(0.25+0.75*e.lens[i]/e.avg))
		}
		if s > 0 {
			scores = append(scores, bm25Score{i, s})
		}
	}
	slices.SortStableFunc(scores, func(a, b bm25Score) int { return cmpFloat(b.s, a.s) })
	return scores
}

func (e *relBM25) rank(_ testing.TB, q string, n int) []string {
	qw := map[string]float64{}
	for _, w := range plainWords(q) {
		qw[w] = 1
	}
	scores := e.scoreAll(qw)
	if e.rm3 && len(scores) > 0 {
		// RM3: P(t) = sum over the top 5 sections of P(t|d) P(d).
		top := scores[:min(5, len(scores))]
		var sum float64
		for _, s := range top {
			sum += s.s
		}
		rm := map[string]float64{}
		for _, s := range top {
			for w, f := range e.tfs[s.i] {
				rm[w] += s.s / sum * float64(f) / e.lens[s.i]
			}
		}
		type tw struct {
			t string
			w float64
		}
		var list []tw
		for w, p := range rm {
			list = append(list, tw{w, p})
		}
		slices.SortFunc(list, func(a, b tw) int {
			if a.w != b.w {
				return cmpFloat(b.w, a.w)
			}
			return strings.Compare(a.t, b.t)
		})
		list = list[:min(10, len(list))]
		var norm float64
		for _, x := range list {
			norm += x.w
		}
		mixed := map[string]float64{}
		for w := range qw {
			mixed[w] = 0.5 / float64(len(qw))
		}
		for _, x := range list {
			mixed[x.t] += 0.5 * x.w / norm
		}
		scores = e.scoreAll(mixed)
	}
	var out []string
	for _, s := range scores[:min(n, len(scores))] {
		d := e.docs[s.i]
		out = append(out, d.file+"#"+d.c.section())
	}
	return out
}

func (e *relBM25) close() {}

// relBleve is bleve v2 with its defaults: the default mapping (standard
// analyzer, every field also in _all), default (tf-idf) scoring, and a
// match query on _all.
type relBleve struct {
	idx  bleve.Index
	keys map[string]string
}

func newRelBleve(tb testing.TB, docs []relDoc) *relBleve {
	tb.Helper()
	idx, err := bleve.New(filepath.Join(tb.TempDir(), "bleve"), bleve.NewIndexMapping())
	if err != nil {
		tb.Fatal(err)
	}
	e := &relBleve{idx: idx, keys: map[string]string{}}
	batch := idx.NewBatch()
	for i, d := range docs {
		id := strconv.Itoa(i)
		e.keys[id] = d.file + "#" + d.c.section()
		if err := batch.Index(id, map[string]string{"heading": strings.Join(d.heading, " "), "body": d.body}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := idx.Batch(batch); err != nil {
		tb.Fatal(err)
	}
	return e
}

func (e *relBleve) rank(tb testing.TB, q string, n int) []string {
	res, err := e.idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), n, 0, false))
	if err != nil {
		tb.Fatalf("bleve %q: %v", q, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, e.keys[h.ID])
	}
	return out
}

func (e *relBleve) close() { e.idx.Close() }
