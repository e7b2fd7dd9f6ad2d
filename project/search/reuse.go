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
func (ix *Index) reusedTerms(ups []fileUpdate, old *snapshot, skip func(c *chunk) bool) map[*chunk][]termIDCount {
	match := make(map[*chunk]uint32)
	for _, u := range ups {
		if !u.reindex || u.entry == nil {
			continue
		}
		for _, c := range u.chunks {
			if skip(c) {
				continue // kept as it is, or analysed already
			}
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
	byID := make(map[uint32][]termIDCount, len(match))
	for tid := range uint32(ix.dict.size()) {
		pl := old.postingsOf(tid)
		if pl == nil {
			continue
		}
		for i, id := range pl.ids {
			if want.has(id) {
				byID[id] = append(byID[id], termIDCount{tid: tid, body: pl.tfs[i], head: pl.hts[i]})
			}
		}
	}
	out := make(map[*chunk][]termIDCount, len(match))
	for c, id := range match {
		p := old.chunks[id]
		c.bodyLen, c.headLen = p.bodyLen, p.headLen
		out[c] = byID[id]
	}
	return out
}

// sameChunks returns the new sections of ups equal in every respect
// (file, title, tags, phase, lines and text) to a section their path held
// before (fileUpdate.prev, in a shared content index), each with that
// section's id: the new content holds that section as it is, its postings
// unchanged, rather than indexing an equal one (a branch that edits one
// section of a file keeps the others, as the siblings hold them). The
// caller holds writeMu.
func (ix *Index) sameChunks(ups []fileUpdate, old *snapshot) map[*chunk]uint32 {
	var same map[*chunk]uint32
	for _, u := range ups {
		if !u.reindex || u.entry == nil || len(u.prev) == 0 {
			continue
		}
		for i, c := range u.chunks {
			// Sections keep their order: the one at the same place is
			// tried first.
			j := -1
			if i < len(u.prev) && sameChunk(old.chunkOf(u.prev[i]), c) {
				j = i
			} else {
				j = slices.IndexFunc(u.prev, func(id uint32) bool { return sameChunk(old.chunkOf(id), c) })
			}
			if j < 0 {
				continue
			}
			if same == nil {
				same = make(map[*chunk]uint32)
			}
			same[c] = u.prev[j]
		}
	}
	return same
}

// holdersAfter returns, for the chunk ids ups drop or keep that more than
// one file entry holds before or after them (see sameChunks), how many
// hold each once ups are applied: 0 when the chunk goes. An id absent has
// one holder before, which ups drop or keep as usual. The caller holds
// writeMu.
func (ix *Index) holdersAfter(ups []fileUpdate, same map[*chunk]uint32) map[uint32]int {
	w := &ix.w
	if len(same) == 0 && len(w.shares) == 0 {
		return nil
	}
	holders := make(map[uint32]int)
	for _, id := range same {
		if _, ok := holders[id]; !ok {
			holders[id] = 1 + w.shares[id]
		}
		holders[id]++
	}
	for _, u := range ups {
		oldE := w.files[u.rel]
		if !u.reindex || oldE == nil {
			continue
		}
		for _, id := range oldE.chunks {
			n, ok := holders[id]
			if !ok {
				if w.shares[id] == 0 {
					continue
				}
				n = 1 + w.shares[id]
			}
			holders[id] = n - 1
		}
	}
	return holders
}

// sameChunk reports whether the section p, in memory, is c in every
// respect: one may stand for the other.
func sameChunk(p, c *chunk) bool {
	return p != nil && !p.stored && p.text == c.text && p.file == c.file && p.title == c.title &&
		p.start == c.start && p.end == c.end && p.bodyStart == c.bodyStart && p.phase == c.phase &&
		p.tokens == c.tokens && slices.Equal(p.heading, c.heading) && slices.Equal(p.tags, c.tags)
}

// sameTerms reports whether the section p, in memory, analyses to the
// same terms as c: the same file (its title may come from the name), title,
// heading path and body.
func sameTerms(p, c *chunk) bool {
	return p != nil && !p.stored && p.file == c.file && p.title == c.title &&
		slices.Equal(p.heading, c.heading) && p.text[p.bodyStart:] == c.text[c.bodyStart:]
}
