package search

import (
	"strings"
	"time"
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// chunk is one indexed section in memory. Chunks are immutable once built.
type chunk struct {
	file      string   // path relative to the root, slash-separated
	heading   []string // heading path, outermost first
	start     int      // first line, 1-based
	end       int      // last line, inclusive
	text      string   // section text, starting with its heading line
	bodyStart int      // offset in text where the body begins
	length    uint32   // weighted term count: the BM25 document length
}

func (c *chunk) section() string { return strings.Join(c.heading, " > ") }

// postingList holds the chunks that contain one term, by ascending chunk id,
// with the term's weighted frequency in each. It is immutable once built.
type postingList struct {
	ids []uint32
	tfs []uint16
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
	chunks   []*chunk       // by chunk id; nil for a free id
	norms    []float32      // by chunk id: k1*(1-b+b*len/avglen)
	postings []*postingList // by term id; nil when the term occurs nowhere
	live     int            // chunks that are not nil
	totalLen uint64         // sum of live chunk lengths
	files    int            // indexed files
	skipped  int            // files seen but not indexed
	terms    int            // terms with postings
	updated  time.Time      // when this state was committed
}

// postingsOf returns the postings of a term id (nil when the id is newer
// than the snapshot or the term occurs nowhere).
func (s *snapshot) postingsOf(id uint32) *postingList {
	if int(id) >= len(s.postings) {
		return nil
	}
	return s.postings[id]
}

// computeNorms fills s.norms from the chunk lengths.
func (s *snapshot) computeNorms() {
	s.norms = make([]float32, len(s.chunks))
	if s.live == 0 {
		return
	}
	avg := float64(s.totalLen) / float64(s.live)
	if avg == 0 {
		avg = 1
	}
	for id, c := range s.chunks {
		if c != nil {
			s.norms[id] = float32(bm25K1 * (1 - bm25B + bm25B*float64(c.length)/avg))
		}
	}
}
