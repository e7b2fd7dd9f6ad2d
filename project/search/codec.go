package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Every stored value ends with a CRC-32C of the bytes before it, so that a
// damaged record is detected on load (and the index rebuilt) instead of
// being served.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errCorrupt = errors.New("corrupt record")

// enc builds one stored value.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) raw(p []byte)     { e.b = append(e.b, p...) }

// seal appends the checksum and returns the value.
func (e *enc) seal() []byte {
	return binary.BigEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))
}

// dec reads one stored value; the first error sticks.
type dec struct {
	b   []byte
	err error
	// whole, when set, is a copy of the payload as a string: str returns
	// pieces of it, sharing one allocation.
	whole string
}

// inString makes the strings read from d share one copy of its payload.
func (d *dec) inString() {
	if d.err == nil {
		d.whole = string(d.b)
	}
}

// open checks v's checksum and returns a decoder over its payload.
func open(v []byte) dec {
	body, sum, err := splitSum(v)
	if err != nil {
		return dec{err: err}
	}
	if crc32.Checksum(body, castagnoli) != sum {
		return dec{err: fmt.Errorf("%w: checksum mismatch", errCorrupt)}
	}
	return dec{b: body}
}

// splitSum cuts a stored value into its body and the CRC-32C stored after
// it, which the caller checks (open at once; a reopen's postings later).
func splitSum(v []byte) (body []byte, sum uint32, err error) {
	if len(v) < 4 {
		return nil, 0, fmt.Errorf("%w: %d bytes", errCorrupt, len(v))
	}
	return v[:len(v)-4], binary.BigEndian.Uint32(v[len(v)-4:]), nil
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", errCorrupt, what)
	}
	d.b = nil
}

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length and checks that at least min bytes per item remain.
func (d *dec) count(minBytes int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/max(minBytes, 1)) {
		d.fail("count")
		return 0
	}
	return int(n)
}

func (d *dec) str() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	var s string
	if d.whole != "" {
		at := len(d.whole) - len(d.b)
		s = d.whole[at : at+n]
	} else {
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
}

func (d *dec) raw(n int) []byte {
	if len(d.b) < n {
		d.fail("bytes")
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

// done reports the first error, or an error if bytes are left over.
func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	return d.err
}
