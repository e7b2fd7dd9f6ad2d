package search

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/berth-dev/berth/project/procs"
	"github.com/berth-dev/berth/store"
)

// storedPostings are the posting lists of a loaded index, kept in their
// stored encoding and decoded on first use: reopening an index decodes no
// list and builds no term map, and an index that is not searched holds its
// postings compact (3-4 bytes a posting instead of 7 and three slices).
// List i belongs to term id i, the i-th stored term in key order (see
// [termDict]). It is immutable but for the cache of decoded lists, which
// any search may fill.
type storedPostings struct {
	raw    []byte   // the lists' payloads (checksums stripped), back to back
	off    []uint32 // list i is raw[off[i]:off[i+1]]
	chunks []*chunk // the loaded chunks, which every id must name
	lists  []atomic.Pointer[postingList]
}

func (sp *storedPostings) len() int { return len(sp.lists) }

// get returns the decoded list of term id, nil when id is not a stored
// term. The lists were checked when they were loaded.
func (sp *storedPostings) get(id uint32) *postingList {
	if int(id) >= len(sp.lists) {
		return nil
	}
	if p := sp.lists[id].Load(); p != nil {
		return p
	}
	p := &postingList{}
	if err := sp.decode(id, p); err != nil {
		return nil
	}
	sp.lists[id].Store(p)
	return p
}

// decode decodes list id into p, reusing p's slices, and checks that every
// id names a loaded chunk.
func (sp *storedPostings) decode(id uint32, p *postingList) error {
	if err := decodePostingsInto(p, sp.raw[sp.off[id]:sp.off[id+1]]); err != nil {
		return err
	}
	if len(p.ids) == 0 {
		return fmt.Errorf("%w: empty postings", errCorrupt)
	}
	for _, c := range p.ids {
		if int(c) >= len(sp.chunks) || sp.chunks[c] == nil {
			return fmt.Errorf("%w: postings name missing chunk %d", errCorrupt, c)
		}
	}
	return nil
}

// compact returns s with every posting list in the stored encoding, as a
// reopened index holds them, and the dictionary of its terms that goes with
// it; s and dict are left as they were. The caller holds writeMu and no
// search may run until the result is in place (the term ids change).
func compact(s *snapshot, dict *termDict) (*snapshot, *termDict) {
	type entry struct {
		term string
		id   uint32
	}
	var live []entry
	rawLen, termLen := 0, 0
	for id := range uint32(dict.size()) {
		if n := s.encodedLen(id); n > 0 {
			t := dict.term(id)
			live = append(live, entry{t, id})
			rawLen, termLen = rawLen+n, termLen+len(t)
		}
	}
	if rawLen+termLen > 1<<31 { // beyond what uint32 offsets can be trusted to hold
		return s, dict
	}
	slices.SortFunc(live, func(a, b entry) int { return strings.Compare(a.term, b.term) })
	var terms strings.Builder
	terms.Grow(termLen)
	base := baseTerms{off: make([]uint32, 1, len(live)+1)}
	sp := &storedPostings{raw: make([]byte, 0, rawLen), off: make([]uint32, 1, len(live)+1), chunks: s.chunks}
	for _, e := range live {
		terms.WriteString(e.term)
		base.off = append(base.off, uint32(terms.Len()))
		sp.raw = s.appendEncoded(sp.raw, e.id)
		sp.off = append(sp.off, uint32(len(sp.raw)))
	}
	base.all = terms.String()
	sp.lists = make([]atomic.Pointer[postingList], len(live))
	ns := *s
	ns.postings, ns.stored, ns.terms = nil, sp, len(live)
	return &ns, newTermDictOver(base)
}

// encodedLen returns about the bytes of term id's stored encoding, 0 when
// the term occurs nowhere. It decodes nothing.
func (s *snapshot) encodedLen(id uint32) int {
	if int(id) < len(s.postings) && s.postings[id] != nil {
		return 4 * s.postings[id].len()
	}
	if s.stored != nil && int(id) < s.stored.len() {
		return int(s.stored.off[id+1] - s.stored.off[id])
	}
	return 0
}

// docFreq returns the number of sections holding term id, read from the
// head of its stored list when the list is not decoded.
func (s *snapshot) docFreq(id uint32) int {
	if int(id) < len(s.postings) && s.postings[id] != nil {
		return s.postings[id].len()
	}
	if s.stored != nil && int(id) < s.stored.len() {
		n, _ := binary.Uvarint(s.stored.raw[s.stored.off[id]:s.stored.off[id+1]])
		return int(n)
	}
	return 0
}

// appendEncoded appends the stored encoding of term id's list to b,
// copying it when it is still the stored one.
func (s *snapshot) appendEncoded(b []byte, id uint32) []byte {
	if int(id) < len(s.postings) && s.postings[id] != nil {
		return appendPostings(b, s.postings[id])
	}
	return append(b, s.stored.raw[s.stored.off[id]:s.stored.off[id+1]]...)
}

// loadStoredPostings copies the postings bucket: the terms (in key order)
// become the dictionary's base, the lists are kept encoded. Nothing is
// checked yet, so that the read transaction ends soon: the lists' checksums
// are returned, one a list, for [storedPostings.verify].
func loadStoredPostings(b *store.Bucket, chunks []*chunk) (baseTerms, *storedPostings, []uint32, error) {
	// A first pass sizes the buffers: growing them copies the bytes over
	// and over, the largest cost of reopening a large index.
	n, keyBytes, valBytes := 0, 0, 0
	b.ForEach(func(k, v []byte) error {
		n, keyBytes, valBytes = n+1, keyBytes+len(k), valBytes+len(v)
		return nil
	})
	var terms strings.Builder
	terms.Grow(keyBytes)
	termOff := make([]uint32, 1, n+1)
	sums := make([]uint32, 0, n)
	sp := &storedPostings{raw: make([]byte, 0, max(0, valBytes-4*n)), off: make([]uint32, 1, n+1), chunks: chunks}
	err := b.ForEach(func(k, v []byte) error {
		body, sum, err := splitSum(v)
		if err != nil {
			return fmt.Errorf("postings of %q: %w", k, err)
		}
		if uint64(terms.Len())+uint64(len(k)) > 1<<32-1 || uint64(len(sp.raw))+uint64(len(body)) > 1<<32-1 {
			return fmt.Errorf("%w: postings beyond 4 GiB", errCorrupt)
		}
		terms.Write(k)
		termOff = append(termOff, uint32(terms.Len()))
		sp.raw = append(sp.raw, body...)
		sp.off = append(sp.off, uint32(len(sp.raw)))
		sums = append(sums, sum)
		return nil
	})
	if err != nil {
		return baseTerms{}, nil, nil, err
	}
	sp.raw = slices.Clip(sp.raw)
	sp.off = slices.Clip(sp.off)
	sp.lists = make([]atomic.Pointer[postingList], len(sp.off)-1)
	return baseTerms{all: terms.String(), off: slices.Clip(termOff)}, sp, sums, nil
}

// verify checks every list copied by loadStoredPostings against its stored
// checksum (sums) and as the decoder would (checkPostings, decoding none):
// a damaged list makes the stored index unusable. The lists are checked
// on every core at once, after the read transaction has ended; the error
// names the first damaged list in key order.
func (sp *storedPostings) verify(base *baseTerms, sums []uint32) error {
	const batch = 512 // lists a worker takes at a time
	n := sp.len()
	errs := make([]error, (n+batch-1)/batch)
	var next atomic.Int64
	var wg sync.WaitGroup
	workers, done := procs.Workers(len(errs))
	defer done()
	for range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= len(errs) {
					return
				}
				for i := b * batch; i < min(n, (b+1)*batch); i++ {
					body := sp.raw[sp.off[i]:sp.off[i+1]]
					var err error
					if crc32.Checksum(body, castagnoli) != sums[i] {
						err = fmt.Errorf("%w: checksum mismatch", errCorrupt)
					} else {
						err = checkPostings(body, sp.chunks) // on bytes as they were written
					}
					if err != nil {
						errs[b] = fmt.Errorf("postings of %q: %w", base.at(i), err)
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return firstErr(errs)
}

// firstErr returns the first non-nil error of errs, or nil.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
