package search

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// oldDefaultRanking is the ranking shipped before the leave-one-corpus-out
// sweep: no file prior, no morphological variants, nothing added to the
// body's length, the heading field weighted 1, file names' first pieces
// matched by any word stemmed like them.
var oldDefaultRanking = func() ranking {
	r := defaultRanking
	r.filePrior, r.rm3Weight, r.variantWeight = 0, 0, 0
	r.bodyPad = 0
	r.headWeight = 1
	r.namePieces = false
	return r
}()

// BenchmarkSearchDefaults measures search latency at 10k files (1k with
// -short) with the old defaults and the new ones, query by query in turn
// on the same index (each going first in turn), and reports each one's p50
// and p99 and their ratios:
//
//	go test ./project/search -run '^$' -bench SearchDefaults -benchtime 1x
func BenchmarkSearchDefaults(b *testing.B) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	e, _ := builtCorpus(b, n)
	queries := querySet(querySeed)
	rankings := []*ranking{&oldDefaultRanking, &defaultRanking}
	lat := latenciesInTurn(b, queries, len(rankings), func(k int) *Index {
		e.ix.rk = rankings[k]
		return e.ix
	})
	old50, old99 := percentileUS(lat[0], 50), percentileUS(lat[0], 99)
	new50, new99 := percentileUS(lat[1], 50), percentileUS(lat[1], 99)
	b.ReportMetric(old50, "old-p50-us")
	b.ReportMetric(old99, "old-p99-us")
	b.ReportMetric(new50, "new-p50-us")
	b.ReportMetric(new99, "new-p99-us")
	b.ReportMetric(new50/old50, "p50-ratio")
	b.ReportMetric(new99/old99, "p99-ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSearchReopened measures search latency on an index as built (its
// sections' texts in memory) and on the same index from the moment it is
// reopened and ready (each text read from the store when a search returns
// it, until the texts are read into memory behind it: warmtexts.go), query
// by query in turn, and reports each one's p50 and p99 and their ratios
// (reopened over built):
//
//	go test ./project/search -run '^$' -bench SearchReopened -benchtime 1x
func BenchmarkSearchReopened(b *testing.B) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	e, _ := builtCorpus(b, n)
	re := &berthEngine{db: e.db, root: e.root}
	re.open(b)
	defer re.ix.Close()
	ixs := []*Index{e.ix, re.ix}
	lat := latenciesInTurn(b, querySet(querySeed), len(ixs), func(k int) *Index { return ixs[k] })
	for _, p := range []int{50, 99} {
		built, reopened := percentileUS(lat[0], p), percentileUS(lat[1], p)
		b.ReportMetric(built, fmt.Sprintf("built-p%d-us", p))
		b.ReportMetric(reopened, fmt.Sprintf("reopened-p%d-us", p))
		b.ReportMetric(reopened/built, fmt.Sprintf("p%d-ratio", p))
	}
	b.ReportMetric(0, "ns/op")
}

// percentileUS returns the p-th percentile of l in microseconds; it sorts l.
func percentileUS(l []time.Duration, p int) float64 {
	slices.Sort(l)
	return float64(l[min(len(l)-1, len(l)*p/100)].Nanoseconds()) / 1e3
}

// latenciesInTurn runs each of queries on each of n subjects (the index
// subject(k) returns, set up for subject k) in turn, each going first in
// turn, 21 rounds of which the first warms up, b.N times, and returns each
// subject's latencies.
func latenciesInTurn(b *testing.B, queries []string, n int, subject func(k int) *Index) [][]time.Duration {
	lat := make([][]time.Duration, n)
	for range b.N {
		for rep := range 21 {
			for qi, q := range queries {
				for k := range n {
					r := (k + qi + rep) % n
					ix := subject(r)
					t := time.Now()
					if _, err := ix.Search(context.Background(), Query{Text: q}); err != nil {
						b.Fatal(err)
					}
					if rep > 0 {
						lat[r] = append(lat[r], time.Since(t))
					}
				}
			}
		}
	}
	return lat
}
