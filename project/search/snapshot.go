package search

import (
	"hash/crc32"
	"slices"
	"strings"
	"time"
)

// chunk is one indexed section in memory. Chunks are immutable once built.
type chunk struct {
	file      string   // path relative to the root, slash-separated
	heading   []string // heading path, outermost first
	start     int      // first line, 1-based
	end       int      // last line, inclusive
	text      string   // section text, starting with its heading line
	bodyStart int      // offset in text where the body begins
	title     string   // the file's front matter title, if any
	tags      []string // the file's front matter tags
	phase     int      // workflow phase number, -1 when none
	tokens    uint32   // estimated model tokens of text (estimateTokens)
	bodyLen   uint32   // terms in the body: its BM25F field length
	headLen   uint32   // weighted terms in the heading field
	fileNo    uint32   // its file's number (Index.numberFile), for per-file arrays
	// stored marks a section loaded from the store without its text
	// (text is ""): the text is read when needed (texts.go) from the
	// texts bucket under textID, and is the one loaded only if its
	// length and CRC-32C are textN and textCRC.
	stored  bool
	textID  uint32
	textN   uint32
	textCRC uint32
}

// textLen is the length of c's text, loaded or not.
func (c *chunk) textLen() int {
	if c.stored {
		return int(c.textN)
	}
	return len(c.text)
}

// textSum is the CRC-32C of c's text, loaded or not.
func (c *chunk) textSum() uint32 {
	if c.stored {
		return c.textCRC
	}
	return crc32.Checksum([]byte(c.text), castagnoli)
}

func (c *chunk) section() string { return strings.Join(c.heading, " > ") }

// postingList holds the chunks that contain one term, by ascending chunk id,
// with the term's frequency in each one's body (tfs) and its weighted count
// in each one's heading field (hts). It is immutable once built.
type postingList struct {
	ids []uint32
	tfs []uint16
	hts []uint8
}

func (p *postingList) len() int {
	if p == nil {
		return 0
	}
	return len(p.ids)
}

// snapshot is one consistent state of the index. Searches read a snapshot
// without locks; the writer builds a new one and swaps it in whole, so a
// search never sees a half-applied change. Slices are never modified after
// the swap (the writer copies what it changes).
type snapshot struct {
	chunks []*chunk // by chunk id; nil for a free id
	// norms holds, by chunk id, what a search reads of a chunk for each
	// of its postings and candidates (see chunkNorm).
	norms []chunkNorm
	// postings is by term id; nil when the term occurs nowhere, or, for a
	// term of stored, when its stored list still holds (noPostings when
	// it emptied out since the load).
	postings  []*postingList
	stored    *storedPostings // the postings of the loaded index, if any
	live      int             // chunks that are not nil
	totalBody uint64          // sum of live chunks' body lengths
	totalHead uint64          // sum of live chunks' heading field lengths
	files     int             // indexed files
	skipped   int             // files seen but not indexed
	terms     int             // terms with postings
	updated   time.Time       // when this state was committed
	fileNos   uint32          // every chunk's fileNo is below it
	// views are, in a shared content index, each worktree's sections.
	views map[*Index]*viewBits
	// view, set on a search's copy of a shared snapshot, restricts the
	// search to one worktree's sections.
	view *viewBits
	// rare remembers the rarest terms of the prefixes queries asked
	// about (morphological variants); nil keeps nothing.
	rare *rareCache
}

// postingsOf returns the postings of a term id (nil when the id is newer
// than the snapshot or the term occurs nowhere).
func (s *snapshot) postingsOf(id uint32) *postingList {
	var p *postingList
	if int(id) < len(s.postings) {
		p = s.postings[id]
	}
	switch {
	case p == noPostings:
		return nil
	case p == nil && s.stored != nil:
		return s.stored.get(id)
	}
	return p
}

// chunkOf returns the section of a chunk id, nil when there is none.
func (s *snapshot) chunkOf(id uint32) *chunk {
	if int(id) < len(s.chunks) {
		return s.chunks[id]
	}
	return nil
}

// noPostings marks, in snapshot.postings, a term of the stored postings
// that no longer occurs anywhere.
var noPostings = &postingList{}

// addChunk and removeChunk keep the live count and field totals.
func (s *snapshot) addChunk(c *chunk) {
	s.live++
	s.totalBody += uint64(c.bodyLen)
	s.totalHead += uint64(c.headLen)
}

// chunkNorm is what a search reads of a chunk for each posting it scores
// and each candidate, side by side: one cache line reached for rather than
// one per field. Reaching for the chunk itself instead cost a cache miss a
// candidate, most of a common word's search on a large index.
type chunkNorm struct {
	// body and head are 1/(1-b+b*len/avglen) of each field: BM25F's
	// length normalization, inverted.
	body, head float32
	file       uint32 // the chunk's fileNo
}

func (s *snapshot) removeChunk(c *chunk) {
	s.live--
	s.totalBody -= uint64(c.bodyLen)
	s.totalHead -= uint64(c.headLen)
}

// computeNorms fills the norms: the length normalizations from the chunk
// lengths, the files from their numbers.
func (s *snapshot) computeNorms(rk *ranking) {
	s.norms = make([]chunkNorm, len(s.chunks))
	for id, c := range s.chunks {
		if c != nil {
			s.norms[id].file = c.fileNo
		}
	}
	if s.live == 0 {
		return
	}
	avgBody := max(1, float64(s.totalBody)/float64(s.live))
	avgHead := max(1, float64(s.totalHead)/float64(s.live))
	for id, c := range s.chunks {
		if c != nil {
			body := float64(c.bodyLen) + float64(rk.bodyPad)
			s.norms[id].body = lengthNorm(rk.bodyB, body, avgBody)
			s.norms[id].head = lengthNorm(rk.headB, float64(c.headLen), avgHead)
		}
	}
}

// countsOf returns section id's frequencies of the list's term, body and
// heading field; found is false when it does not hold it (or p is nil).
func (p *postingList) countsOf(id uint32) (tf uint16, ht uint8, found bool) {
	if p == nil {
		return 0, 0, false
	}
	j, found := slices.BinarySearch(p.ids, id)
	if !found {
		return 0, 0, false
	}
	return p.tfs[j], p.hts[j], true
}
