package search

import "slices"

// posting is one chunk id with a term's counts in it.
type posting struct {
	id uint32
	tf uint16 // in the body
	ht uint8  // weighted, in the heading field
}

// mergePostings returns a new list: old without the ids in removed, plus
// added. removed and added may come in any order; they are sorted here. An
// id both removed and added takes its added frequency. old is not modified.
// The result is nil when empty.
func mergePostings(old *postingList, removed []uint32, added []posting) *postingList {
	slices.Sort(removed)
	sortPostings(added)
	n := old.len() + len(added)
	if n == 0 {
		return nil
	}
	out := &postingList{ids: make([]uint32, 0, n), tfs: make([]uint16, 0, n), hts: make([]uint8, 0, n)}
	var oldIDs []uint32
	var oldTFs []uint16
	var oldHTs []uint8
	if old != nil {
		oldIDs, oldTFs, oldHTs = old.ids, old.tfs, old.hts
	}
	i, j, r := 0, 0, 0
	for i < len(oldIDs) || j < len(added) {
		if j >= len(added) || (i < len(oldIDs) && oldIDs[i] < added[j].id) {
			id := oldIDs[i]
			for r < len(removed) && removed[r] < id {
				r++
			}
			if r >= len(removed) || removed[r] != id {
				out.ids = append(out.ids, id)
				out.tfs = append(out.tfs, oldTFs[i])
				out.hts = append(out.hts, oldHTs[i])
			}
			i++
			continue
		}
		if i < len(oldIDs) && oldIDs[i] == added[j].id {
			i++ // replaced by the added posting
		}
		out.ids = append(out.ids, added[j].id)
		out.tfs = append(out.tfs, added[j].tf)
		out.hts = append(out.hts, added[j].ht)
		j++
	}
	if len(out.ids) == 0 {
		return nil
	}
	return out
}

// sortPostings sorts ps by id. The postings a commit adds to a list come
// in the order their chunk ids were handed out, ascending (see
// commitWith): that order, or its reverse, is found in one pass.
func sortPostings(ps []posting) {
	cmp := func(a, b posting) int { return int(int64(a.id) - int64(b.id)) }
	switch {
	case slices.IsSortedFunc(ps, cmp):
	case slices.IsSortedFunc(ps, func(a, b posting) int { return cmp(b, a) }):
		slices.Reverse(ps)
	default:
		slices.SortFunc(ps, cmp)
	}
}
