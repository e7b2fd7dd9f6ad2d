package search

import (
	"context"
	"math"
	"slices"
)

// checkEvery is how many postings or candidates a search goes through
// between two checks of its context.
const checkEvery = 1 << 13

// score adds the BM25F score of every section holding a term of p to
// sc.acc (a morphological variant only to sections already scored), lists
// the sections it touched in sc.touched, and counts there the required
// terms each holds. lists holds the postings of p's
// terms, by index in p.terms.
//
// BM25F (Robertson, Zaragoza and Taylor, 2004): a term's frequencies in the
// fields are length-normalized per field, weighted and summed into one
// pseudo-frequency t, which saturates once: idf * t * (k1+1) / (t + k1).
//
// It stops with ctx's error when ctx ends.
func (ix *Index) score(ctx context.Context, s *snapshot, p *plan, lists []*postingList, sc *scratch) error {
	rk := ix.rk
	k1 := rk.k1
	n := float64(s.live)
	// A section must hold every required term to match: when there are
	// some, only the sections holding them all are scored, each term's
	// postings visited at those sections alone. A phrase of a rare word
	// and a common one no longer scores every section of the common word.
	restrict := p.need > 0
	if restrict {
		sc.only = holdingAll(p, lists, sc.only[:0])
		if len(sc.only) == 0 {
			return nil
		}
	}
	for i, term := range p.terms {
		if ix.interrupted(ctx) {
			return ctx.Err()
		}
		pl := lists[i]
		if pl == nil {
			continue
		}
		w := idf(n, float64(len(pl.ids))) * (k1 + 1) * p.weight(i)
		req := p.required[i]
		variant := slices.Contains(p.variants, term)
		names := ix.nameCounts(s, p.fileNames[term])
		if !restrict && names == nil {
			if err := ix.scoreAll(ctx, s, pl, w, req, variant, sc); err != nil {
				return err
			}
			continue
		}
		visits := len(pl.ids)
		if restrict {
			visits = len(sc.only)
		}
		for k, j := 0, 0; k < visits; k++ {
			if k > 0 && k%checkEvery == 0 && ix.interrupted(ctx) {
				return ctx.Err()
			}
			if restrict {
				// The next section to score; pl.ids and sc.only ascend.
				off, found := slices.BinarySearch(pl.ids[j:], sc.only[k])
				if j += off; !found {
					continue
				}
			} else {
				j = k
			}
			id := pl.ids[j]
			tf, ht := pl.tfs[j], pl.hts[j]
			if nc, ok := names[id]; ok {
				// The pieces of file names are not the query's word.
				tf, ht = tf-min(tf, nc.tf), ht-min(ht, nc.ht)
				if tf == 0 && ht == 0 {
					continue
				}
			}
			acc := &sc.acc[id]
			if acc.score == 0 {
				if variant {
					continue // a variant brings in no section
				}
				sc.touched = append(sc.touched, id)
			}
			nm := &s.norms[id]
			t := float32(tf)*nm.body + rk.headWeight*float32(ht)*nm.head
			acc.score += w * saturate(t, k1)
			if req {
				acc.req++
			}
		}
	}
	return nil
}

// scoreAll is score's loop for a term whose every posting counts (no
// required terms restrict the sections, no file names to take out): it
// adds w times the saturated frequency at each of pl's sections.
func (ix *Index) scoreAll(ctx context.Context, s *snapshot, pl *postingList, w float32, req, variant bool, sc *scratch) error {
	k1, hw := ix.rk.k1, ix.rk.headWeight
	ids := pl.ids
	tfs, hts := pl.tfs[:len(ids)], pl.hts[:len(ids)]
	accs, norms := sc.acc, s.norms
	for k, id := range ids {
		if k > 0 && k%checkEvery == 0 && ix.interrupted(ctx) {
			return ctx.Err()
		}
		acc := &accs[id]
		if acc.score == 0 {
			if variant {
				continue // a variant brings in no section
			}
			sc.touched = append(sc.touched, id)
		}
		nm := &norms[id]
		t := float32(tfs[k])*nm.body + hw*float32(hts[k])*nm.head
		acc.score += w * saturate(t, k1)
		if req {
			acc.req++
		}
	}
	return nil
}

// holdingAll appends to ids, ascending, the sections whose postings hold
// every required term of p, and returns it: the only sections that can
// match p. The rarest term's list is intersected with each other's. all
// holds the postings of p's terms, by index in p.terms.
func holdingAll(p *plan, all []*postingList, ids []uint32) []uint32 {
	var lists []*postingList
	for i, pl := range all {
		if !p.required[i] {
			continue
		}
		if pl == nil {
			return ids
		}
		lists = append(lists, pl)
	}
	slices.SortFunc(lists, func(a, b *postingList) int { return len(a.ids) - len(b.ids) })
	ids = append(ids, lists[0].ids...)
	for _, pl := range lists[1:] {
		kept, j := ids[:0], 0
		for _, id := range ids {
			off, found := slices.BinarySearch(pl.ids[j:], id)
			if j += off; found {
				kept = append(kept, id)
			}
		}
		if ids = kept; len(ids) == 0 {
			break
		}
	}
	return ids
}

// nameCount is how many times a section holds some names, in its body
// and in its heading field.
type nameCount struct {
	tf uint16
	ht uint8
}

// nameCounts sums, per section, the counts of the given terms (nil when
// there are none).
func (ix *Index) nameCounts(s *snapshot, names []string) map[uint32]nameCount {
	if len(names) == 0 {
		return nil
	}
	out := map[uint32]nameCount{}
	for _, name := range names {
		pl := ix.postings(s, name)
		if pl == nil {
			continue
		}
		for j, id := range pl.ids {
			c := out[id]
			c.tf += pl.tfs[j]
			c.ht += pl.hts[j]
			out[id] = c
		}
	}
	return out
}

// idf is BM25's inverse document frequency of a term held by df of n
// documents.
func idf(n, df float64) float32 { return float32(math.Log(1 + (n-df+0.5)/(df+0.5))) }

// saturate is BM25F's saturation of a term's pseudo-frequency t.
func saturate(t, k1 float32) float32 { return t / (t + k1) }

// lengthNorm is 1/(1-b+b*length/avg): BM25F's length normalization of a
// field, inverted, so that a frequency is multiplied by it.
func lengthNorm(b float32, length, avg float64) float32 {
	return float32(1 / (1 - float64(b) + float64(b)*length/avg))
}
