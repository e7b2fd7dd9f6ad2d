package search

import "math"

// withBurstWeights returns p with each ranked term's weight scaled by how
// bursty the term is in the project: the smoothed share of the sections
// holding it in their body that hold it more than once, relative to
// burstBase, capped at 1 and raised to burstGamma. A word a section is
// about tends to recur in it; a word a question merely uses in passing
// ("every", "place", "still", "refuse") seldom does, however rare it is.
func (ix *Index) withBurstWeights(s *snapshot, p *plan) *plan {
	rk := ix.rk
	if rk.burstGamma == 0 {
		return p
	}
	q := *p
	q.weights = make([]float32, len(p.terms))
	for i, term := range p.terms {
		q.weights[i] = p.weight(i)
		if p.required[i] {
			continue
		}
		tid, ok := ix.dict.lookup(term)
		if !ok {
			continue
		}
		pl := s.postingsOf(tid)
		multi, inBody := 0, 0
		for _, tf := range pl.tfs {
			if tf > 0 {
				inBody++
			}
			if tf > 1 {
				multi++
			}
		}
		if inBody == 0 {
			continue
		}
		r := (float64(multi) + rk.burstAlpha*rk.burstBase) / (float64(inBody) + rk.burstAlpha)
		q.weights[i] *= float32(math.Pow(min(1, r/rk.burstBase), rk.burstGamma))
	}
	return &q
}
