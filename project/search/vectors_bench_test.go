package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkFuseVectors is what the embedder's ranking costs a search over
// 10k sections with 768-number vectors: the cosine ranking (a dot product
// per section) and its fusion with a BM25F ranking of 50.
//
//	go test ./project/search -run '^$' -bench FuseVectors
func BenchmarkFuseVectors(b *testing.B) {
	const n, dim = 10000, 768
	r := rand.New(rand.NewPCG(1, 2))
	ix := &Index{rk: &defaultRanking, vec: vectors{byChunk: map[*chunk][]float32{}}}
	s := &snapshot{chunks: make([]*chunk, n), live: n}
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		normalize(v)
		return v
	}
	for i := range s.chunks {
		c := &chunk{file: fmt.Sprintf("s/%05d.md", i), start: 1, end: 2, phase: -1}
		s.chunks[i] = c
		ix.vec.byChunk[c] = vec()
	}
	bm := make([]candidate, fuseDepth)
	for i := range bm {
		bm[i] = candidate{id: uint32(r.IntN(n)), score: float32(fuseDepth - i)}
	}
	p := &plan{phase: -1, n: 5}
	q := vec()
	b.ResetTimer()
	c0 := cpuTime(b)
	for range b.N {
		list, err := ix.vectorRanking(context.Background(), s, p, q, fuseDepth)
		if err != nil {
			b.Fatal(err)
		}
		if got := fuse(s, [][]candidate{bm, list}, 5); len(got) != 5 {
			b.Fatalf("%d fused", len(got))
		}
	}
	b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
}
