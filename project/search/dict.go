package search

import (
	"sort"
	"strings"
	"sync"
)

// termDict maps terms to dense term ids. It only grows: an id, once given,
// names the same term for the life of the [Index], so snapshots of any age
// can share it. Terms whose postings empty out keep their id.
//
// The terms of a loaded index are its base: ids 0..n-1 in sorted order,
// held as one string and looked up by binary search, so that reopening an
// index builds no map. Terms added later get the ids after them.
type termDict struct {
	base baseTerms // immutable

	mu  sync.RWMutex // guards ids and terms
	ids map[string]uint32
	// terms holds the added terms: terms[i] has id base.len()+i.
	terms []string
	// byPrefix maps the first prefixLen bytes of every added term at least
	// that long to the ids of those terms.
	byPrefix map[string][]uint32

	// found remembers the base terms searches looked up (at most
	// foundMax, forgotten all at once when full), so that a term a
	// search asks for again skips the binary search of the base: a
	// base term's id never changes, so no commit makes it stale.
	foundMu sync.RWMutex
	found   map[string]uint32
}

// foundMax bounds the base terms a dictionary remembers for searches.
const foundMax = 4096

// baseTerms is a sorted list of distinct terms in one string: term i is
// all[off[i]:off[i+1]].
type baseTerms struct {
	all string
	off []uint32
}

func (b *baseTerms) len() int {
	if len(b.off) == 0 {
		return 0
	}
	return len(b.off) - 1
}

func (b *baseTerms) at(i int) string { return b.all[b.off[i]:b.off[i+1]] }

// find returns the index of the first term >= t.
func (b *baseTerms) find(t string) int {
	return sort.Search(b.len(), func(i int) bool { return b.at(i) >= t })
}

// id returns the index of term t, if the base holds it.
func (b *baseTerms) id(t string) (int, bool) {
	i := b.find(t)
	return i, i < b.len() && b.at(i) == t
}

// prefixLen is the length of the prefixes byPrefix groups terms by.
const prefixLen = 5

func newTermDict() *termDict { return newTermDictOver(baseTerms{}) }

// newTermDictOver returns a dictionary whose first ids are base's terms.
func newTermDictOver(base baseTerms) *termDict {
	return &termDict{base: base, ids: make(map[string]uint32), byPrefix: make(map[string][]uint32)}
}

// lookup returns the id of term, if it has one.
func (d *termDict) lookup(term string) (uint32, bool) {
	if i, ok := d.base.id(term); ok {
		return uint32(i), true
	}
	return d.added(term)
}

// added returns the id of term among the added terms, if it has one.
func (d *termDict) added(term string) (uint32, bool) {
	d.mu.RLock()
	id, ok := d.ids[term]
	d.mu.RUnlock()
	return id, ok
}

// lookupCached is lookup for a search: a base term it finds is remembered, and
// found again without the binary search.
func (d *termDict) lookupCached(term string) (uint32, bool) {
	d.foundMu.RLock()
	id, ok := d.found[term]
	d.foundMu.RUnlock()
	if ok {
		return id, true
	}
	i, ok := d.base.id(term)
	if !ok {
		return d.added(term)
	}
	d.foundMu.Lock()
	if len(d.found) >= foundMax || d.found == nil {
		d.found = make(map[string]uint32)
	}
	d.found[d.base.at(i)] = uint32(i) // the base's string: the key keeps no other text
	d.foundMu.Unlock()
	return uint32(i), true
}

// intern returns the id of term, giving it a new one if needed. Only the
// index writer calls it.
func (d *termDict) intern(term string) uint32 {
	if id, ok := d.lookup(term); ok {
		return id
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if id, ok := d.ids[term]; ok {
		return id
	}
	id := uint32(d.base.len() + len(d.terms))
	d.ids[term] = id
	d.terms = append(d.terms, term)
	if len(term) >= prefixLen {
		d.byPrefix[term[:prefixLen]] = append(d.byPrefix[term[:prefixLen]], id)
	}
	return id
}

// sharingPrefix calls fn with every term that shares term's first n bytes
// (n <= prefixLen: among the terms that share its first prefixLen), term
// itself included, in id order.
func (d *termDict) sharingPrefix(term string, n int, fn func(id uint32, t string)) {
	if len(term) < max(n, prefixLen) {
		return
	}
	p := term[:max(n, prefixLen)]
	for i := d.base.find(p); i < d.base.len(); i++ {
		t := d.base.at(i)
		if !strings.HasPrefix(t, p) {
			break
		}
		if t[:n] == term[:n] {
			fn(uint32(i), t)
		}
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, id := range d.byPrefix[p[:prefixLen]] {
		if t := d.terms[int(id)-d.base.len()]; strings.HasPrefix(t, p) && t[:n] == term[:n] {
			fn(id, t)
		}
	}
}

// term returns the term with the given id.
func (d *termDict) term(id uint32) string {
	if int(id) < d.base.len() {
		return d.base.at(int(id))
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.terms[int(id)-d.base.len()]
}

// size is the number of ids given so far.
func (d *termDict) size() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.base.len() + len(d.terms)
}
