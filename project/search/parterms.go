package search

import (
	"sync"

	"github.com/berth-dev/berth/project/procs"
)

// parallelFrom is the number of chunks from which chunksTerms analyses in
// parallel: below it the writer's own analyzer is quicker than starting
// workers with cold stem caches.
const parallelFrom = 64

// chunksTerms returns the terms of each of cs, analysed with rk, in
// parallel (a worker per processor, each with an analyzer of its own) when
// there are many, else with an. With setLens each chunk's body and head
// lengths are set too (only for chunks no snapshot holds yet).
func chunksTerms(cs []*chunk, rk *ranking, an *analyzer, counts map[string]fieldCounts, setLens bool) [][]termCount {
	out := make([][]termCount, len(cs))
	one := func(i int, an *analyzer, counts map[string]fieldCounts) {
		tcs, bodyLen, headLen := an.chunkTerms(cs[i], rk, counts)
		if setLens {
			cs[i].bodyLen, cs[i].headLen = bodyLen, headLen
		}
		out[i] = tcs
	}
	workers, done := procs.Workers(len(cs) / parallelFrom * 2)
	defer done()
	if workers < 2 {
		for i := range cs {
			one(i, an, counts)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan int, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			an, counts := newAnalyzer(), make(map[string]fieldCounts)
			for i := range next {
				one(i, an, counts)
			}
		}()
	}
	for i := range cs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
