package search

import "sync"

// termDict maps terms to dense term ids. It only grows: an id, once given,
// names the same term for the life of the [Index], so snapshots of any age
// can share it. Terms whose postings empty out keep their id.
type termDict struct {
	mu  sync.RWMutex // guards ids and terms
	ids map[string]uint32
	// terms is indexed by id.
	terms []string
	// byPrefix maps the first prefixLen bytes of every term at least that
	// long to the ids of those terms.
	byPrefix map[string][]uint32
}

// prefixLen is the length of the prefixes byPrefix groups terms by.
const prefixLen = 5

func newTermDict() *termDict {
	return &termDict{ids: make(map[string]uint32), byPrefix: make(map[string][]uint32)}
}

// lookup returns the id of term, if it has one.
func (d *termDict) lookup(term string) (uint32, bool) {
	d.mu.RLock()
	id, ok := d.ids[term]
	d.mu.RUnlock()
	return id, ok
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
	id := uint32(len(d.terms))
	d.ids[term] = id
	d.terms = append(d.terms, term)
	if len(term) >= prefixLen {
		d.byPrefix[term[:prefixLen]] = append(d.byPrefix[term[:prefixLen]], id)
	}
	return id
}

// sharingPrefix calls fn with every term that shares term's first n bytes
// (n <= prefixLen), term itself included.
func (d *termDict) sharingPrefix(term string, n int, fn func(id uint32, t string)) {
	if len(term) < prefixLen || n > prefixLen {
		return
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, id := range d.byPrefix[term[:prefixLen]] {
		if t := d.terms[id]; t[:n] == term[:n] {
			fn(id, t)
		}
	}
}

// term returns the term with the given id.
func (d *termDict) term(id uint32) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.terms[id]
}

// size is the number of ids given so far.
func (d *termDict) size() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.terms)
}
