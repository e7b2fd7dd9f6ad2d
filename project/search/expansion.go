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
// "privileged") found in the project's own vocabulary. A variant adds to
// the score of the sections the query's own words matched and brings in
// no other: a word that shares five letters with the query's is a hint,
// not a match.
func (ix *Index) withVariants(s *snapshot, p *plan) *plan {
	rk := ix.rk
	if rk.variantWeight == 0 {
		return p
	}
	var add []string
	best := make([]variant, 0, rk.variantMax)
	for i, t := range p.terms {
		if p.required[i] || len(t) < rk.variantPrefix {
			continue
		}
		// The variantMax rarest terms sharing t's prefix that are not the
		// query's own nor taken already: first from the prefix's rarest
		// few, and from all of its terms when those run out.
		for _, keep := range []int{rarestKeep, math.MaxInt} {
			best = best[:0]
			l := ix.rarestSharing(s, t, rk.variantPrefix, keep)
			for _, v := range l.terms {
				if len(best) < rk.variantMax && v.t != t && !slices.Contains(p.terms, v.t) && !slices.Contains(add, v.t) {
					best = append(best, v)
				}
			}
			if len(best) == rk.variantMax || l.whole {
				break
			}
		}
		for _, v := range best {
			add = append(add, v.t)
		}
	}
	q := p.plus(add, rk.variantWeight)
	if len(add) > 0 {
		q.variants = add
	}
	return q
}

// withFileNames returns p with, for each query word the stemmer shortened
// ("resolvers" to resolv), the dotted names of the index whose first piece
// is that stem as written (resolv.conf, whose resolv is no form of
// "resolve"): score does not count a piece of such a name as the query's
// word. A name's first piece is a file, host or package name, spelled as
// its author chose and never stemmed into the word; a query word spelled
// like it ("config" and config.yaml) still matches it.
func (ix *Index) withFileNames(s *snapshot, p *plan) *plan {
	if !ix.rk.namePieces {
		return p
	}
	var names map[string][]string
	for i, t := range p.terms {
		w := strings.ToLower(p.word(t))
		if p.required[i] || w == t || !strings.HasPrefix(w, t) || !isStemmable(w) {
			continue
		}
		if l := ix.dottedNames(s, t); len(l) > 0 {
			if names == nil {
				names = map[string][]string{}
			}
			names[t] = l
		}
	}
	if names == nil {
		return p
	}
	q := *p
	q.fileNames = names
	return &q
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
	return ix.postings(s, term).len()
}

// plus returns a copy of p with terms added at weight w.
func (p *plan) plus(terms []string, w float32) *plan {
	if len(terms) == 0 {
		return p
	}
	q := *p
	n := len(p.terms) + len(terms)
	q.terms = append(append(make([]string, 0, n), p.terms...), terms...)
	q.required = make([]bool, n)
	copy(q.required, p.required)
	q.weights = make([]float32, n)
	for i := range q.weights {
		if i < len(p.terms) {
			q.weights[i] = p.weight(i)
		} else {
			q.weights[i] = w
		}
	}
	return &q
}

// weighted is a term of a relevance model and its probability.
type weighted struct {
	term string
	w    float64
}

// relevanceModel returns the ranking's rm3Terms most likely terms of the
// top sections of a first pass (best first in top), query terms left out,
// with weights that sum to 1: P(t) = sum over sections d of P(t|d) P(d),
// P(t|d) the term's share of d's field counts, P(d) d's share of the
// sections' first-pass scores. Terms held by one section of the index only
// are left out. It stops with ctx's error when ctx ends.
func (ix *Index) relevanceModel(ctx context.Context, s *snapshot, p *plan, top []candidate) ([]weighted, error) {
	rk := ix.rk
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	counts := make(map[string]fieldCounts)
	top = top[:min(len(top), rk.rm3Docs)]
	var sum float64
	for _, c := range top {
		sum += float64(c.score)
	}
	prob := map[string]float64{}
	cs := make([]*chunk, len(top))
	for i, c := range top {
		cs[i] = s.chunks[c.id]
	}
	// A section loaded without its text (a reopened index) is read as
	// every reader of texts reads it.
	err := ix.eachText(s, cs, func(i int, text string) bool {
		if ix.interrupted(ctx) {
			return false
		}
		withText := *cs[i]
		withText.text = text
		tcs, bodyLen, headLen := an.chunkTerms(&withText, rk, counts)
		total := float64(bodyLen + headLen)
		pd := float64(top[i].score) / sum
		for _, tc := range tcs {
			if !slices.Contains(p.terms, tc.term) {
				prob[tc.term] += pd * float64(int(tc.body)+int(tc.head)) / total
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	list := make([]weighted, 0, len(prob))
	for t, w := range prob {
		if ix.df(s, t) >= 2 {
			list = append(list, weighted{t, w})
		}
	}
	slices.SortFunc(list, func(a, b weighted) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return strings.Compare(a.term, b.term)
	})
	list = list[:min(len(list), rk.rm3Terms)]
	var norm float64
	for _, x := range list {
		norm += x.w
	}
	for i := range list {
		list[i].w /= norm
	}
	return list, nil
}

// expanded returns a copy of p whose own terms share 1-lambda of the
// query's weight (in proportion to their weights) and whose added terms,
// exp, share lambda (in proportion to theirs). The added terms are recorded
// in the plan's expansion list.
func (p *plan) expanded(exp []weighted, lambda float32) *plan {
	if len(exp) == 0 {
		return p
	}
	q := *p
	var own float32
	for i := range p.terms {
		own += p.weight(i)
	}
	q.terms = slices.Clone(p.terms)
	q.required = append(slices.Clone(p.required), make([]bool, len(exp))...)
	q.weights = make([]float32, 0, len(p.terms)+len(exp))
	for i := range p.terms {
		q.weights = append(q.weights, (1-lambda)*p.weight(i)/own)
	}
	q.expansion = nil
	for _, x := range exp {
		q.terms = append(q.terms, x.term)
		q.weights = append(q.weights, lambda*float32(x.w))
		q.expansion = append(q.expansion, x.term)
	}
	return &q
}
