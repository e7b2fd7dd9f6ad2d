package search

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// commit applies file updates as one change: one store transaction, then
// one snapshot swap. When the store write fails the swap still happens
// (memory is right; the stored copy is rewritten whole on the next write)
// and the error is returned. The caller holds writeMu.
func (ix *Index) commit(ups []fileUpdate) error { return ix.commitWith(ups, nil) }

// commitWith is commit that, when hook is set, swaps a snapshot in even
// when no file changed, and calls hook with the new snapshot before the
// swap, and a lookup of each file's entry as of that snapshot (by its
// path as bytes, which the lookup does not keep).
func (ix *Index) commitWith(ups []fileUpdate, hook func(ns *snapshot, entry func(rel []byte) *fileEntry)) error {
	w := &ix.w
	old := ix.snap.Load()
	ns := &snapshot{
		chunks:    slices.Clone(old.chunks),
		live:      old.live,
		totalBody: old.totalBody,
		totalHead: old.totalHead,
		files:     old.files,
		skipped:   old.skipped,
		terms:     old.terms,
		stored:    old.stored,
		views:     old.views,
	}
	var d delta
	var freed []uint32
	same := ix.sameChunks(ups, old)
	holders := ix.holdersAfter(ups, same)
	removed, addedTerms := ix.termsOfChanges(ups, old, same, holders)
	added := newTermLists[posting](len(addedTerms) >= denseFrom, ix.dict.size())
	if len(addedTerms) >= denseFrom {
		// Free ids are handed out last first: in descending order, each
		// term's new postings come in ascending order of id, as its list
		// holds them, and need no sorting.
		slices.SortFunc(w.free, func(a, b uint32) int { return cmp.Compare(b, a) })
	}
	for _, u := range ups {
		oldE := w.files[u.rel]
		if u.entry == nil && oldE == nil {
			continue
		}
		if !u.reindex && u.entry != nil && oldE != nil && u.entry.same(oldE) {
			continue // nothing changed, not even the mtime
		}
		if u.reindex && oldE != nil {
			for _, id := range oldE.chunks {
				c := ns.chunks[id]
				if n, ok := holders[id]; ok && (n > 0 || c == nil) {
					continue // held by other content still, or dropped already
				}
				ns.chunks[id] = nil
				ns.removeChunk(c)
				d.delChunks = append(d.delChunks, id)
				freed = append(freed, id)
			}
		}
		if u.reindex && u.entry != nil {
			ids := make([]uint32, len(u.chunks))
			for i, c := range u.chunks {
				if id, ok := same[c]; ok {
					ids[i] = id // the section as it is, held by other content too
					continue
				}
				id := w.alloc()
				ids[i] = id
				tcs := addedTerms[c]
				if int(id) >= len(ns.chunks) {
					ns.chunks = append(ns.chunks, make([]*chunk, int(id)+1-len(ns.chunks))...)
				}
				ns.chunks[id] = c
				w.numberFile(c)
				ns.addChunk(c)
				for _, tc := range tcs {
					added.add(tc.tid, posting{id: id, tf: tc.body, ht: tc.head})
				}
				d.putChunks = append(d.putChunks, id)
			}
			u.entry.chunks = ids
		}
		ns.files, ns.skipped = countFile(ns.files, ns.skipped, oldE, -1)
		ns.files, ns.skipped = countFile(ns.files, ns.skipped, u.entry, +1)
		d.files = append(d.files, fileChange{rel: u.rel, entry: u.entry})
	}
	if len(d.files) == 0 && hook == nil {
		return nil
	}
	ns.postings = make([]*postingList, ix.dict.size())
	copy(ns.postings, old.postings)
	for _, tid := range removed.touched {
		if added.get(tid) == nil {
			added.touch(tid)
		}
	}
	for _, tid := range added.touched {
		before := ns.postingsOf(tid)
		after := mergePostings(before, removed.get(tid), added.get(tid))
		ns.postings[tid] = after
		if after == nil && ns.stored != nil && int(tid) < ns.stored.len() {
			ns.postings[tid] = noPostings // hides the stored list
		}
		switch {
		case before.len() == 0 && after.len() > 0:
			ns.terms++
		case before.len() > 0 && after.len() == 0:
			ns.terms--
		}
		d.terms = append(d.terms, tid)
	}
	ns.computeNorms(ix.rk)
	ns.updated = time.Now().UTC()
	ns.fileNos = uint32(len(w.fileNos))
	if hook != nil {
		pending := make(map[string]*fileEntry, len(d.files))
		for _, f := range d.files {
			pending[f.rel] = f.entry
		}
		hook(ns, func(rel []byte) *fileEntry {
			if e, ok := pending[string(rel)]; ok {
				return e
			}
			return w.files[string(rel)]
		})
	}

	err := ix.persist(ns, &d)
	ns.rare = newRareCache()
	ix.snap.Store(ns)
	for _, f := range d.files {
		if f.entry == nil {
			delete(w.files, f.rel)
		} else {
			w.files[f.rel] = f.entry
		}
	}
	w.free = append(w.free, freed...)
	for id, n := range holders {
		switch {
		case n <= 1:
			delete(w.shares, id)
		case w.shares == nil:
			w.shares = map[uint32]int{id: n - 1}
		default:
			w.shares[id] = n - 1
		}
	}
	ix.noteFilesChanged()
	ix.kickEmbedder()
	return err
}

// termsOfChanges finds the postings of the chunks ups drop (by term id, the
// chunk ids to remove from its list) and analyses, in parallel when they
// are many, the chunks ups add (setting their lengths); an added chunk
// equal to a section its file held before may take that section's terms
// instead (see reusedTerms). The caller holds writeMu.
func (ix *Index) termsOfChanges(ups []fileUpdate, old *snapshot, same map[*chunk]uint32, holders map[uint32]int) (removed *termLists[uint32], added map[*chunk][]termIDCount) {
	w := &ix.w
	var ids []uint32
	var gone, fresh []*chunk
	going := make(map[uint32]bool)
	ahead := make(map[*chunk][]termIDCount)
	for _, u := range ups {
		oldE := w.files[u.rel]
		if !u.reindex || (u.entry == nil && oldE == nil) {
			continue
		}
		if oldE != nil {
			for _, id := range oldE.chunks {
				if n, ok := holders[id]; ok && (n > 0 || going[id]) {
					continue
				}
				going[id] = true
				ids = append(ids, id)
				gone = append(gone, old.chunks[id])
			}
		}
		if u.entry != nil {
			for i, c := range u.chunks {
				if _, ok := same[c]; ok {
					continue
				}
				if i < len(u.terms) && u.terms[i] != nil {
					ahead[c] = u.terms[i] // analysed during a checkout
					continue
				}
				fresh = append(fresh, c)
			}
		}
	}
	removed = ix.droppedPostings(ids, gone, old)
	added = ix.termsOf(ups, old, fresh, func(c *chunk) bool {
		_, kept := same[c]
		_, analysed := ahead[c]
		return kept || analysed
	})
	maps.Copy(added, ahead)
	return removed, added
}

// termsOf returns the terms of the chunks fresh, new chunks of ups,
// interned: taken from old's postings for a chunk equal in its terms to a
// section its path held (see reusedTerms; skip names the chunks of ups
// not to match so), else analysed (setting its lengths). fresh's array is
// reused. The caller holds writeMu.
func (ix *Index) termsOf(ups []fileUpdate, old *snapshot, fresh []*chunk, skip func(c *chunk) bool) map[*chunk][]termIDCount {
	terms := ix.reusedTerms(ups, old, skip)
	if terms == nil {
		terms = make(map[*chunk][]termIDCount, len(fresh))
	}
	fresh = slices.DeleteFunc(fresh, func(c *chunk) bool { _, ok := terms[c]; return ok })
	for i, tcs := range chunksTerms(fresh, ix.rk, ix.w.an, ix.w.counts, true) {
		terms[fresh[i]] = ix.internTerms(tcs)
	}
	return terms
}

// dropScanFrom is the number of chunks dropped by one commit from which
// their postings are found in one pass over the posting lists held in
// memory, rather than by analysing each chunk's text again.
const dropScanFrom = reuseFrom

// droppedPostings returns, by term id, the chunk ids (gone, by id) to
// remove from each posting list of old. The caller holds writeMu.
func (ix *Index) droppedPostings(ids []uint32, gone []*chunk, old *snapshot) *termLists[uint32] {
	removed := newTermLists[uint32](len(ids) >= denseFrom, ix.dict.size())
	if len(ids) >= dropScanFrom && old.stored == nil {
		var drop viewBits
		for _, id := range ids {
			drop.set(id)
		}
		for tid, pl := range old.postings {
			if pl == nil {
				continue
			}
			for _, id := range pl.ids {
				if drop.has(id) {
					removed.add(uint32(tid), id)
				}
			}
		}
		return removed
	}
	w := &ix.w
	gone, read := ix.withTexts(gone)
	ix.warnUnread(gone, read)
	note := func(id uint32, tcs []termCount) {
		for _, tc := range tcs {
			removed.add(ix.dict.intern(tc.term), id)
		}
	}
	var readIDs []uint32
	var readGone []*chunk
	for i, c := range gone {
		if read[i] {
			readIDs, readGone = append(readIDs, ids[i]), append(readGone, c)
		} else {
			note(ids[i], termsHolding(old, ix.dict, ids[i]))
		}
	}
	for i, tcs := range chunksTerms(readGone, ix.rk, w.an, w.counts, false) {
		note(readIDs[i], tcs)
	}
	return removed
}

// denseFrom is the number of chunks a commit adds or drops from which it
// gathers each term's postings in a slice indexed by term id rather than
// a map: a branch switch adds hundreds of thousands of postings.
const denseFrom = 256

// termLists gathers, by term id, the postings a commit adds to or removes
// from each list, and the term ids touched, in their first order.
type termLists[T any] struct {
	dense   [][]T // by term id, for a large commit (see denseFrom)
	sparse  map[uint32][]T
	touched []uint32
}

// newTermLists returns empty lists, dense for the size terms of a
// dictionary when dense is set.
func newTermLists[T any](dense bool, size int) *termLists[T] {
	l := &termLists[T]{sparse: make(map[uint32][]T)}
	if dense {
		l.dense = make([][]T, size)
	}
	return l
}

// add appends v to the list of term tid.
func (l *termLists[T]) add(tid uint32, v T) {
	if int(tid) < len(l.dense) {
		if l.dense[tid] == nil {
			l.touched = append(l.touched, tid)
		}
		l.dense[tid] = append(l.dense[tid], v)
		return
	}
	list, ok := l.sparse[tid]
	if !ok {
		l.touched = append(l.touched, tid)
	}
	l.sparse[tid] = append(list, v)
}

// touch adds tid, with an empty list, to the terms touched.
func (l *termLists[T]) touch(tid uint32) { l.touched = append(l.touched, tid) }

// get returns the list of term tid.
func (l *termLists[T]) get(tid uint32) []T {
	if int(tid) < len(l.dense) {
		return l.dense[tid]
	}
	return l.sparse[tid]
}

// countFile adds sign times e's contribution to the file counts.
func countFile(files, skipped int, e *fileEntry, sign int) (int, int) {
	switch {
	case e == nil:
	case e.skip != "":
		skipped += sign
	default:
		files += sign
	}
	return files, skipped
}

// alloc returns a free chunk id.
func (w *writer) alloc() uint32 {
	if n := len(w.free); n > 0 {
		id := w.free[n-1]
		w.free = w.free[:n-1]
		return id
	}
	id := w.next
	w.next++
	return id
}

// same reports whether two entries record the same file state.
func (f *fileEntry) same(o *fileEntry) bool {
	return f.size == o.size && f.mtime == o.mtime && f.hash == o.hash && f.skip == o.skip
}

// termsHolding returns the terms whose postings in s name chunk id, found
// by searching every list: the terms of a section whose stored text cannot
// be read (damaged), so that they can be dropped all the same. The caller
// holds writeMu.
func termsHolding(s *snapshot, dict *termDict, id uint32) []termCount {
	var out []termCount
	for tid := range uint32(dict.size()) {
		if pl := s.postingsOf(tid); pl != nil {
			if _, found := slices.BinarySearch(pl.ids, id); found {
				out = append(out, termCount{term: dict.term(tid)})
			}
		}
	}
	return out
}
