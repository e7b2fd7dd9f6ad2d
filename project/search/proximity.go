package search

import "math"

// withProximity re-scores the best proxDepth candidates with a bonus for
// query terms that occur near each other in the section's text (BM25TP,
// Rasolofo and Savoy 2003): every pair of occurrences of two different
// query terms at most proxWindow words apart adds 1/d² to the pair's
// accumulator, which saturates like a term frequency and is weighted by
// the pair's smaller idf. The text is analyzed again, so only the top of
// the ranking is looked at.
func (ix *Index) withProximity(s *snapshot, p *plan, an *analyzer, cands []candidate) []candidate {
	rk := ix.rk
	if rk.proxWeight == 0 || len(p.terms) < 2 || len(cands) == 0 {
		return cands
	}
	idx := make(map[string]int, len(p.terms))
	idf := make([]float64, len(p.terms))
	n := float64(s.live)
	for i, t := range p.terms {
		idx[t] = i
		df := float64(ix.df(s, t))
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	top := topN(s, cands, rk.proxDepth)
	type occ struct{ term, pos int }
	var recent []occ
	acc := make([]float64, len(p.terms)*len(p.terms))
	for k := range top {
		c := s.chunks[top[k].id]
		recent = recent[:0]
		clear(acc)
		pos := 0
		an.stream(c.text, func(t string) {
			pos++
			i, ok := idx[t]
			if !ok {
				return
			}
			j := 0
			for _, o := range recent {
				if d := pos - o.pos; d <= rk.proxWindow {
					recent[j] = o
					j++
					if o.term != i {
						a, b := min(i, o.term), max(i, o.term)
						acc[a*len(p.terms)+b] += 1 / float64(d*d)
					}
				}
			}
			recent = append(recent[:j], occ{i, pos})
		})
		bonus := 0.0
		for a := range p.terms {
			for b := a + 1; b < len(p.terms); b++ {
				if v := acc[a*len(p.terms)+b]; v > 0 {
					bonus += min(idf[a], idf[b]) * v / (v + 1)
				}
			}
		}
		top[k].score += float32(rk.proxWeight * bonus)
	}
	return top
}
