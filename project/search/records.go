package search

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unique"
)

// indexFormat is the version of the stored index: the record encodings
// below and the analyzer's output. Change it whenever either changes; a
// stored index of another format is rebuilt.
//
// Format 2 added the heading field to postings (BM25F), the field lengths,
// front matter title, tags, workflow phase and token estimate to chunks.
// Format 3: a file of headings alone is indexed by its headings (it had
// no chunks before, and its unchanged file would not be read again).
// Format 4: headings, titles and tags are stored cut to their caps, and a
// file whose sections would store more than maxExpansion is refused.
// Format 5: analyzer 3 (a word in -er keeps its -er), whose terms an index
// of an older analyzer does not hold.
// Format 6: a section's text is stored apart from its record (texts), read
// when a search returns it; the record holds the text's length and
// checksum, and no longer its file (the file's entry names its sections).
const indexFormat = 6

// Bucket and key names inside the index area (see doc.go for the tree).
const (
	bucketMeta     = "meta"
	bucketFiles    = "files"
	bucketChunks   = "chunks"
	bucketPostings = "postings"
	bucketTexts    = "texts"
)

var (
	keyFormat    = []byte("format")
	keyNextChunk = []byte("next_chunk")
	keyUpdatedAt = []byte("updated_at")
)

// fileEntry is what the index knows about one source file.
type fileEntry struct {
	size   int64
	mtime  int64    // modification time, Unix nanoseconds
	hash   [16]byte // first 16 bytes of the content's SHA-256
	skip   string   // why the file is not indexed ("" when it is)
	chunks []uint32 // its chunk ids, in file order
	// path, in a view of a shared index, is the file's path interned: the
	// view's key for it is path.Value(), one string for every view
	// holding the path, and the handle keeps it interned.
	path unique.Handle[string]
}

func encodeFile(f *fileEntry) []byte {
	var e enc
	e.varint(f.size)
	e.varint(f.mtime)
	e.raw(f.hash[:])
	e.str(f.skip)
	e.uvarint(uint64(len(f.chunks)))
	for _, id := range f.chunks {
		e.uvarint(uint64(id))
	}
	return e.seal()
}

func decodeFile(v []byte) (*fileEntry, error) {
	f := &fileEntry{}
	return f, decodeFileInto(f, v, nil)
}

// decodeFileInto decodes a file's entry from v into f; its chunk ids are
// appended to *ids when ids is set (one slice shared by many entries).
func decodeFileInto(f *fileEntry, v []byte, ids *[]uint32) error {
	d := open(v)
	f.size, f.mtime = d.varint(), d.varint()
	copy(f.hash[:], d.raw(len(f.hash)))
	f.skip = d.str()
	n := d.count(1)
	if n > 0 {
		var buf []uint32
		if ids != nil && cap(*ids)-len(*ids) >= n {
			buf = (*ids)[len(*ids) : len(*ids)+n : len(*ids)+n]
			*ids = (*ids)[:len(*ids)+n]
		} else {
			buf = make([]uint32, n)
		}
		for i := range buf {
			buf[i] = uint32(d.uvarint())
		}
		f.chunks = buf
	}
	return d.done()
}

func chunkKey(id uint32) []byte { return binary.BigEndian.AppendUint32(nil, id) }

func chunkID(key []byte) (uint32, error) {
	if len(key) != 4 {
		return 0, fmt.Errorf("%w: chunk key of %d bytes", errCorrupt, len(key))
	}
	return binary.BigEndian.Uint32(key), nil
}

// encodeChunk stores a section's record: all but its file (the file's entry
// names its sections) and its text (stored apart by encodeText), of which it
// keeps the length and checksum.
func encodeChunk(c *chunk) []byte {
	var e enc
	e.b = make([]byte, 0, 64)
	e.uvarint(uint64(len(c.heading)))
	for _, h := range c.heading {
		e.str(h)
	}
	e.uvarint(uint64(c.start))
	e.uvarint(uint64(c.end))
	e.uvarint(uint64(c.bodyStart))
	e.uvarint(uint64(c.bodyLen))
	e.uvarint(uint64(c.headLen))
	e.str(c.title)
	e.uvarint(uint64(len(c.tags)))
	for _, t := range c.tags {
		e.str(t)
	}
	e.varint(int64(c.phase))
	e.uvarint(uint64(c.tokens))
	e.uvarint(uint64(c.textLen()))
	e.raw(binary.BigEndian.AppendUint32(nil, c.textSum()))
	return e.seal()
}

// encodeText stores a section's text: the text, then its CRC-32C (the
// checksum every stored value ends with, which the section's record keeps
// too).
func encodeText(text string) []byte {
	e := enc{b: make([]byte, 0, len(text)+4)}
	e.b = append(e.b, text...)
	return e.seal()
}

func decodeChunk(v []byte) (*chunk, error) {
	d := open(v)
	d.inString() // one allocation: the strings below share it
	c := &chunk{}
	if err := decodeChunkFrom(c, &d, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeChunkFrom decodes a section's record from d into c: c's text is
// left to be read from the texts bucket (c.stored), and its file to be set by
// the file's entry. Its heading and tags are cut from *strs when strs is
// set (one slice shared by many chunks).
func decodeChunkFrom(c *chunk, d *dec, strs *[]string) error {
	if n := d.count(1); n > 0 {
		c.heading = takeStrings(strs, n)
		for i := range c.heading {
			c.heading[i] = d.str()
		}
	}
	c.start = int(d.uvarint())
	c.end = int(d.uvarint())
	c.bodyStart = int(d.uvarint())
	c.bodyLen = uint32(d.uvarint())
	c.headLen = uint32(d.uvarint())
	c.title = d.str()
	if n := d.count(1); n > 0 {
		c.tags = takeStrings(strs, n)
		for i := range c.tags {
			c.tags[i] = d.str()
		}
	}
	c.phase = int(d.varint())
	c.tokens = uint32(d.uvarint())
	n := d.uvarint()
	sum := d.raw(4)
	if err := d.done(); err != nil {
		return err
	}
	if n > 1<<32-1 || uint64(c.bodyStart) > n || c.start < 1 || c.end < c.start {
		return fmt.Errorf("%w: section record has bad bounds", errCorrupt)
	}
	c.stored, c.textN, c.textCRC = true, uint32(n), binary.BigEndian.Uint32(sum)
	return nil
}

// takeStrings returns a slice of n strings, cut from the free capacity of
// *strs when it has room (and strs is set), else allocated.
func takeStrings(strs *[]string, n int) []string {
	if strs == nil || cap(*strs)-len(*strs) < n {
		return make([]string, n)
	}
	at := len(*strs)
	*strs = (*strs)[:at+n]
	return (*strs)[at : at+n : at+n]
}

// encodePostings stores a posting list as a count, then (id delta, body
// tf, heading count) triples.
func encodePostings(p *postingList) []byte {
	e := enc{b: appendPostings(make([]byte, 0, 4*len(p.ids)+8), p)}
	return e.seal()
}

// appendPostings appends the payload of p's stored value to b.
func appendPostings(b []byte, p *postingList) []byte {
	e := enc{b: b}
	e.uvarint(uint64(len(p.ids)))
	prev := uint32(0)
	for i, id := range p.ids {
		e.uvarint(uint64(id - prev))
		e.uvarint(uint64(p.tfs[i]))
		e.uvarint(uint64(p.hts[i]))
		prev = id
	}
	return e.b
}

// decodePostingsInto decodes a list's payload (checksum stripped) into p,
// reusing p's slices.
func decodePostingsInto(p *postingList, body []byte) error {
	d := dec{b: body}
	n := d.count(3)
	p.ids = slices.Grow(p.ids[:0], n)[:n]
	p.tfs = slices.Grow(p.tfs[:0], n)[:n]
	p.hts = slices.Grow(p.hts[:0], n)[:n]
	var id uint64
	for i := 0; i < n && d.err == nil; i++ {
		delta := d.uvarint()
		if i > 0 && delta == 0 {
			d.fail("posting order")
		}
		id += delta
		tf, ht := d.uvarint(), d.uvarint()
		if id > 1<<32-1 || tf+ht == 0 || tf > maxTF || ht > maxHeadTF {
			d.fail("posting")
		}
		p.ids[i], p.tfs[i], p.hts[i] = uint32(id), uint16(tf), uint8(ht)
	}
	return d.done()
}

// checkPostings checks a list's payload (checksum stripped) as
// decodePostingsInto and then [storedPostings.decode] would, keeping
// nothing: a reopen checks every stored list this way, in one pass.
func checkPostings(body []byte, chunks []*chunk) error {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k)/3 {
		return fmt.Errorf("%w: bad count", errCorrupt)
	}
	if n == 0 {
		return fmt.Errorf("%w: empty postings", errCorrupt)
	}
	b := body[k:]
	var id uint64
	for i := range n {
		// Most postings are a delta of one or two bytes, then tf and
		// heading count of one byte each: those are read inline.
		var delta, tf, ht uint64
		var k1 int
		switch {
		case len(b) > 0 && b[0] < 0x80:
			delta, k1 = uint64(b[0]), 1
		case len(b) > 1 && b[1] < 0x80:
			delta, k1 = uint64(b[0]&0x7f)|uint64(b[1])<<7, 2
		default:
			if delta, k1 = binary.Uvarint(b); k1 <= 0 {
				return fmt.Errorf("%w: bad varint", errCorrupt)
			}
		}
		if len(b) >= k1+2 && (b[k1]|b[k1+1])&0x80 == 0 {
			tf, ht = uint64(b[k1]), uint64(b[k1+1])
			b = b[k1+2:]
		} else {
			var k2, k3 int
			if tf, k2 = binary.Uvarint(b[k1:]); k2 <= 0 {
				return fmt.Errorf("%w: bad varint", errCorrupt)
			}
			if ht, k3 = binary.Uvarint(b[k1+k2:]); k3 <= 0 {
				return fmt.Errorf("%w: bad varint", errCorrupt)
			}
			b = b[k1+k2+k3:]
		}
		if i > 0 && delta == 0 {
			return fmt.Errorf("%w: bad posting order", errCorrupt)
		}
		id += delta
		if id > 1<<32-1 || tf+ht == 0 || tf > maxTF || ht > maxHeadTF {
			return fmt.Errorf("%w: bad posting", errCorrupt)
		}
		if id >= uint64(len(chunks)) || chunks[id] == nil {
			return fmt.Errorf("%w: postings name missing chunk %d", errCorrupt, id)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(b))
	}
	return nil
}
