package search

import (
	"cmp"
	"slices"
	"strings"
)

// Fusion of rankings by reciprocal rank (Cormack, Clarke and Buettcher
// 2009): a section's fused score is the sum over the rankings that hold it
// of 1/(rrfK + its rank there), rank 1 the best.
const (
	rrfK = 60
	// fuseDepth is how many sections of each ranking are fused.
	fuseDepth = MaxResults
)

// fuse returns the best n sections of the fused rankings, best first:
// higher fused score, then file path, then start line.
func fuse(s *snapshot, lists [][]candidate, n int) []candidate {
	score := map[uint32]float32{}
	var order []uint32
	for _, list := range lists {
		for rank, c := range list {
			if _, ok := score[c.id]; !ok {
				order = append(order, c.id)
			}
			score[c.id] += 1 / float32(rrfK+rank+1)
		}
	}
	out := make([]candidate, 0, len(order))
	for _, id := range order {
		out = append(out, candidate{id: id, score: score[id]})
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		ca, cb := s.chunks[a.id], s.chunks[b.id]
		if c := strings.Compare(ca.file, cb.file); c != 0 {
			return c
		}
		return cmp.Compare(ca.start, cb.start)
	})
	return out[:min(n, len(out))]
}
