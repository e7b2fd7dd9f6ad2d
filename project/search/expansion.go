package search

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
)

// withSynonyms returns p with each ranked term's related terms added at
// the ranking's synonym weight (terms already in p, and terms in more than
// synMaxDF of the sections, are left out). p itself is not changed.
func (ix *Index) withSynonyms(s *snapshot, p *plan) *plan {
	rk := ix.rk
	if rk.synonyms == nil || rk.synWeight == 0 {
		return p
	}
	var add []string
	for i, t := range p.terms {
		if p.required[i] {
			continue
		}
		for _, syn := range rk.synonyms[t] {
			if slices.Contains(p.terms, syn) || slices.Contains(add, syn) {
				continue
			}
			if ix.df(s, syn) > int(rk.synMaxDF*float64(s.live)) {
				continue
			}
			add = append(add, syn)
		}
	}
	return p.plus(add, rk.synWeight)
}

// withVariants returns p with, for each ranked query term, the index
// terms that share its first variantPrefix bytes (rarest first, at most
// variantMax per term) added at the variant weight: derivational forms the
// stemmer keeps apart ("verification" and "verify", "privileges" and
// "privileged") found in the project's own vocabulary.
func (ix *Index) withVariants(s *snapshot, p *plan) *plan {
	rk := ix.rk
	if rk.variantWeight == 0 {
		return p
	}
	var add []string
	for i, t := range p.terms {
		if p.required[i] || len(t) < rk.variantPrefix {
			continue
		}
		type v struct {
			t  string
			df int
		}
		var vs []v
		ix.dict.sharingPrefix(t, rk.variantPrefix, func(id uint32, term string) {
			if term == t || slices.Contains(p.terms, term) || slices.Contains(add, term) {
				return
			}
			if df := s.postingsOf(id).len(); df > 0 {
				vs = append(vs, v{term, df})
			}
		})
		slices.SortFunc(vs, func(a, b v) int {
			if a.df != b.df {
				return a.df - b.df
			}
			return strings.Compare(a.t, b.t)
		})
		for _, x := range vs[:min(len(vs), rk.variantMax)] {
			add = append(add, x.t)
		}
	}
	return p.plus(add, rk.variantWeight)
}

// withJoined returns p with the joined pairs of its words that the index
// holds as compound identifiers added at the ranking's joined weight.
func (ix *Index) withJoined(s *snapshot, p *plan) *plan {
	if ix.rk.joinedWeight == 0 {
		return p
	}
	var add []string
	for _, j := range p.joined {
		if !slices.Contains(p.terms, j) && !slices.Contains(add, j) && ix.df(s, j) > 0 {
			add = append(add, j)
		}
	}
	return p.plus(add, ix.rk.joinedWeight)
}

// df is the number of sections holding term.
func (ix *Index) df(s *snapshot, term string) int {
	tid, ok := ix.dict.lookup(term)
	if !ok {
		return 0
	}
	return s.postingsOf(tid).len()
}

// plus returns a copy of p with terms added at weight w.
func (p *plan) plus(terms []string, w float32) *plan {
	if len(terms) == 0 {
		return p
	}
	q := *p
	q.terms = append(slices.Clone(p.terms), terms...)
	q.required = append(slices.Clone(p.required), make([]bool, len(terms))...)
	q.weights = make([]float32, len(q.terms))
	for i := range q.weights {
		if i < len(p.terms) {
			q.weights[i] = p.weight(i)
		} else {
			q.weights[i] = w
		}
	}
	return &q
}

// feedbackTerms picks the ranking's prfTerms best terms of the top
// sections of a first pass (best first in top): terms scored by their
// summed normalized frequency times idf, query terms left out. It stops
// with ctx's error when ctx ends.
func (ix *Index) feedbackTerms(ctx context.Context, s *snapshot, p *plan, top []candidate) ([]string, error) {
	rk := ix.rk
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	counts := make(map[string]fieldCounts)
	weight := map[string]float64{}
	for _, c := range top[:min(len(top), rk.prfDocs)] {
		if ix.interrupted(ctx) {
			return nil, ctx.Err()
		}
		ch := s.chunks[c.id]
		tcs, bodyLen, headLen := an.chunkTerms(ch, rk, counts)
		total := float64(bodyLen + headLen)
		for _, tc := range tcs {
			if slices.Contains(p.terms, tc.term) {
				continue
			}
			weight[tc.term] += float64(tc.body+uint16(tc.head)) / total
		}
	}
	type tw struct {
		t string
		w float64
	}
	var list []tw
	n := float64(s.live)
	for t, w := range weight {
		df := float64(ix.df(s, t))
		if df < 2 {
			continue
		}
		list = append(list, tw{t, w * math.Log(1+(n-df+0.5)/(df+0.5))})
	}
	slices.SortFunc(list, func(a, b tw) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return strings.Compare(a.t, b.t)
	})
	var out []string
	for _, x := range list[:min(len(list), rk.prfTerms)] {
		out = append(out, x.t)
	}
	return out, nil
}
