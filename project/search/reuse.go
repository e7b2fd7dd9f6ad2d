package search

import "slices"

// reuseFrom is the number of new sections equal to a section their file
// held before from which a commit takes their terms from the postings
// rather than analysing their text again: finding them means one pass
// over every posting list, which pays only for many sections (a branch
// switch that changes one section of each of many files).
const reuseFrom = 64

// reusedTerms returns the terms of the new sections of ups that equal a
// section of the content their path held before (fileUpdate.prev), read
// from old's postings of that section instead of analysing the text, and
// sets their lengths; nil when they are fewer than reuseFrom. The caller
// holds writeMu.
func (ix *Index) reusedTerms(ups []fileUpdate, old *snapshot) map[*chunk][]termCount {
	match := make(map[*chunk]uint32)
	for _, u := range ups {
		if !u.reindex || u.entry == nil {
			continue
		}
		for _, c := range u.chunks {
			for _, id := range u.prev {
				if int(id) < len(old.chunks) && sameTerms(old.chunks[id], c) {
					match[c] = id
					break
				}
			}
		}
	}
	if len(match) < reuseFrom {
		return nil
	}
	var want viewBits
	for _, id := range match {
		want.set(id)
	}
	byID := make(map[uint32][]termCount, len(match))
	for tid := range uint32(ix.dict.size()) {
		pl := old.postingsOf(tid)
		if pl == nil {
			continue
		}
		var term string
		for i, id := range pl.ids {
			if !want.has(id) {
				continue
			}
			if term == "" {
				term = ix.dict.term(tid)
			}
			byID[id] = append(byID[id], termCount{term: term, body: pl.tfs[i], head: pl.hts[i]})
		}
	}
	out := make(map[*chunk][]termCount, len(match))
	for c, id := range match {
		p := old.chunks[id]
		c.bodyLen, c.headLen = p.bodyLen, p.headLen
		out[c] = byID[id]
	}
	return out
}

// sameTerms reports whether the section p, in memory, analyses to the
// same terms as c: the same file (its title may come from the name), title,
// heading path and body.
func sameTerms(p, c *chunk) bool {
	return p != nil && !p.stored && p.file == c.file && p.title == c.title &&
		slices.Equal(p.heading, c.heading) && p.text[p.bodyStart:] == c.text[c.bodyStart:]
}
