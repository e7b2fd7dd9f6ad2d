package search

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// headIndex lists, per chunk id, the ids of the terms in its heading field,
// and per term id the number of chunks holding it in their heading field.
type headIndex struct {
	once  sync.Once
	terms [][]uint32
	df    []int32
}

// headsOf builds (once per snapshot) the heading index of s from its
// postings: terms whose heading count is at least minCount.
func (s *snapshot) headsOf(minCount uint8) *headIndex {
	h := &s.heads
	h.once.Do(func() {
		h.terms = make([][]uint32, len(s.chunks))
		h.df = make([]int32, len(s.postings))
		for tid, pl := range s.postings {
			if pl == nil {
				continue
			}
			for j, id := range pl.ids {
				if pl.hts[j] >= minCount {
					h.terms[id] = append(h.terms[id], uint32(tid))
					h.df[tid]++
				}
			}
		}
	})
	return h
}

// Association statistics.
const (
	assocPMI   = iota // sum over query words of P(h|q) * log(P(h|q)/P(h))
	assocNPMI         // sum of normalized PMI
	assocTrans        // sum of idf(q) * P(q in body | h in heading)
)

// withAssociations returns p with heading terms associated with its words
// added: a term h is associated with a query word q when the sections
// holding q in their body name h in their heading field more often than
// sections do at large. The project's own documentation thus translates
// the words a question is asked in into the words its headings name
// features with.
func (ix *Index) withAssociations(s *snapshot, p *plan) *plan {
	rk := ix.rk
	if rk.assocWeight == 0 || s.live == 0 {
		return p
	}
	minHead := uint8(1)
	if rk.assocOwn {
		minHead = rk.own
	}
	h := s.headsOf(minHead)
	n := float64(s.live)
	inQuery := map[uint32]bool{}
	for _, t := range p.terms {
		if tid, ok := ix.dict.lookup(t); ok {
			inQuery[tid] = true
		}
	}
	strength := map[uint32]float64{}
	cnt := map[uint32]int{}
	for i, t := range p.terms {
		if p.required[i] {
			continue
		}
		tid, ok := ix.dict.lookup(t)
		if !ok {
			continue
		}
		pl := s.postingsOf(tid)
		if pl.len() == 0 || float64(pl.len()) > rk.assocMaxDF*n {
			continue
		}
		df := float64(pl.len())
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		clear(cnt)
		nb := 0
		for j, id := range pl.ids {
			if pl.tfs[j] == 0 {
				continue
			}
			nb++
			for _, ht := range h.terms[id] {
				cnt[ht]++
			}
		}
		for ht, c := range cnt {
			if c < rk.assocMinCount || inQuery[ht] || isNumber(ix.dict.term(ht)) {
				continue
			}
			pHQ := float64(c) / float64(nb)
			dh := float64(h.df[ht])
			lift := pHQ / (dh / n)
			if lift <= 1 {
				continue
			}
			switch rk.assocStat {
			case assocPMI:
				strength[ht] += pHQ * math.Log(lift)
			case assocNPMI:
				if v := math.Log(lift) / -math.Log(float64(c)/n); v >= rk.assocMin {
					strength[ht] += v
				}
			case assocTrans:
				if v := float64(c) / dh; v >= rk.assocMin {
					strength[ht] += idf * v
				}
			}
		}
	}
	type cand struct {
		tid uint32
		w   float64
	}
	var cs []cand
	for tid, w := range strength {
		cs = append(cs, cand{tid, w})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return cmp.Compare(a.tid, b.tid)
	})
	cs = cs[:min(len(cs), rk.assocTerms)]
	if len(cs) == 0 {
		return p
	}
	terms := make([]string, len(cs))
	weights := make([]float32, len(cs))
	for i, c := range cs {
		terms[i] = ix.dict.term(c.tid)
		weights[i] = rk.assocWeight
		if rk.assocScaled {
			weights[i] = rk.assocWeight * float32(c.w/cs[0].w)
		}
	}
	q := p.plusWeighted(terms, weights)
	if rk.assocHeadOnly {
		q.headOnly = make([]bool, len(q.terms))
		for i := len(p.terms); i < len(q.terms); i++ {
			q.headOnly[i] = true
		}
	}
	return q
}

// isNumber reports whether t is made of digits only.
func isNumber(t string) bool {
	for _, r := range t {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// plusWeighted returns a copy of p with terms added, each at its weight.
func (p *plan) plusWeighted(terms []string, ws []float32) *plan {
	q := p.plus(terms, 1)
	copy(q.weights[len(p.terms):], ws)
	return q
}

// fuse merges two rankings by reciprocal rank (Cormack, Clarke and
// Buettcher, 2009): each candidate scores the sum of 1/(k+rank) over the
// rankings it is in.
func fuse(s *snapshot, a, b []candidate, depth int, k float32) []candidate {
	score := map[uint32]float32{}
	for _, list := range [][]candidate{topN(s, a, depth), topN(s, b, depth)} {
		for r, c := range list {
			score[c.id] += 1 / (k + float32(r+1))
		}
	}
	out := make([]candidate, 0, len(score))
	for id, sc := range score {
		out = append(out, candidate{id: id, score: sc})
	}
	return out
}
