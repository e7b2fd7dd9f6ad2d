package search

import (
	"slices"
	"testing"
)

// FuzzStoredRecords feeds arbitrary bytes to every decoder of the stored
// index, sealed (so that the checksum passes) and as they are: each
// returns a value or an error, never panics, and a stored posting list is
// either refused or names only loaded chunks, in order, and the reopen's
// check of a list (checkPostings) refuses exactly what the decoder does.
func FuzzStoredRecords(f *testing.F) {
	p := &postingList{ids: []uint32{0, 2, 5}, tfs: []uint16{1, 3, 0}, hts: []uint8{0, 1, 2}}
	f.Add(appendPostings(nil, p))
	f.Add([]byte{2, 0, 1, 0, 0, 1, 0})
	f.Add([]byte{0})
	c := &chunk{file: "a.md", heading: []string{"A"}, start: 1, end: 2, text: "# A\nbody", bodyStart: 4, phase: -1}
	f.Add(encodeChunk(c)[:len(encodeChunk(c))-4])
	f.Add(encodeFile(&fileEntry{size: 3, mtime: 9, chunks: []uint32{0, 2}})[:10])
	f.Fuzz(func(t *testing.T, payload []byte) {
		sealed := (&enc{b: slices.Clone(payload)}).seal()
		for _, v := range [][]byte{payload, sealed} {
			if c, err := decodeChunk(v); err == nil && (c.bodyStart > c.textLen() || c.end < c.start) {
				t.Fatalf("chunk with bad bounds accepted: %+v", c)
			}
			decodeFile(v)
		}
		chunks := []*chunk{c, nil, c, c, c, c}
		sp := &storedPostings{raw: payload, off: []uint32{0, uint32(len(payload))}, chunks: chunks}
		var got postingList
		err := sp.decode(0, &got)
		if cerr := checkPostings(payload, chunks); (cerr == nil) != (err == nil) {
			t.Fatalf("the reopen's check and the decoder disagree: check %v, decode %v", cerr, err)
		}
		if err != nil {
			return
		}
		if len(got.ids) == 0 || !slices.IsSorted(got.ids) {
			t.Fatalf("postings accepted out of order or empty: %v", got.ids)
		}
		for i, id := range got.ids {
			if int(id) >= len(chunks) || chunks[id] == nil {
				t.Fatalf("postings accepted naming missing chunk %d", id)
			}
			if i > 0 && id == got.ids[i-1] {
				t.Fatalf("postings accepted with chunk %d twice", id)
			}
		}
		if again := appendPostings(nil, &got); len(again) > len(payload) { // the canonical encoding is never longer
			t.Fatalf("re-encoding %v gave %d bytes from %d", got.ids, len(again), len(payload))
		}
	})
}
