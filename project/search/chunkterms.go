package search

// Field weights: a term in a chunk's own heading counts as this many body
// occurrences; a term in an enclosing heading counts once. BM25 then runs
// over the weighted counts (and the weighted length), so a heading match
// ranks a section above one that only mentions the word in passing.
const (
	ownHeadingWeight      = 3
	ancestorHeadingWeight = 1
	maxTF                 = 1<<16 - 1
)

// termCount is one term of a chunk and its weighted frequency.
type termCount struct {
	term string
	tf   uint16
}

// chunkTerms returns the distinct terms of c, in no particular order, with weighted
// frequencies, and c's weighted length. counts is scratch space.
func (a *analyzer) chunkTerms(c *chunk, counts map[string]uint32) ([]termCount, uint32) {
	clear(counts)
	var length uint32
	add := func(weight uint32) func(string) {
		return func(t string) {
			counts[t] += weight
			length += weight
		}
	}
	for i, h := range c.heading {
		w := uint32(ancestorHeadingWeight)
		if i == len(c.heading)-1 {
			w = ownHeadingWeight
		}
		a.terms(h, add(w))
	}
	a.terms(c.text[c.bodyStart:], add(1))
	out := make([]termCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, termCount{term: t, tf: uint16(min(n, maxTF))})
	}
	return out, length
}
