package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// rawFile reads a bbolt file page by page from a copy in memory, without
// bbolt: salvage uses it on files bbolt refuses to open (a damaged header)
// or would fault on (pages past the end of a truncated file). Every read
// is bounds-checked, so a damaged file gives errors, never faults.
//
// The layout is bbolt's (go.etcd.io/bbolt/internal/common), in the byte
// order of the machine that wrote it: little-endian on every platform
// Berth builds for. A page starts with a 16-byte header (id uint64, flags
// uint16, count uint16, overflow uint32); a branch page's elements are
// (pos, ksize uint32, child page id uint64), a leaf page's (flags, pos,
// ksize, vsize uint32), pos counting from the element itself. A leaf
// element with the bucket flag holds a bucket: its root page id and
// sequence (uint64 each), then, when the root is 0, the bucket's one page
// inline. Pages 0 and 1 are meta pages.
type rawFile struct {
	data  []byte
	psize int
	meta  *rawMeta // the valid meta page of the latest transaction; nil if neither is valid
	metas int      // how many of the two meta pages are valid
}

// bbolt's constants.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	elementSize      = 16 // a branch or a leaf element
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagMeta         = 0x04
	flagFreelist     = 0x10
	flagBucketLeaf   = 0x01
	bucketHeaderSize = 16
	metaSumLen       = 56 // the meta's bytes its checksum covers
)

type rawMeta struct {
	pageSize uint32
	root     uint64 // the root bucket's root page
	freelist uint64
	pgid     uint64 // the high-water mark: pages at or past it are unused
	txid     uint64
}

var le = binary.LittleEndian

// readRaw loads the file at path.
func readRaw(path string) (*rawFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &rawFile{data: data}
	f.meta, f.metas = metas(data)
	if f.meta != nil {
		f.psize = int(f.meta.pageSize)
	} else {
		f.psize = f.guessPageSize()
	}
	return f, nil
}

// metas finds the meta pages in data, the file's first bytes (at least
// two pages): the valid one of the latest transaction, and how many are
// valid.
func metas(data []byte) (*rawMeta, int) {
	var newest *rawMeta
	n := 0
	if m := parseMeta(data, 0); m != nil {
		newest, n = m, 1
	}
	for _, ps := range pageSizes() {
		if m := parseMeta(data, ps); m != nil && int(m.pageSize) == ps {
			n++
			if newest == nil || m.txid > newest.txid {
				newest = m
			}
			break
		}
	}
	return newest, n
}

// readMetas reads only the meta pages of the file at path.
func readMetas(path string) (*rawMeta, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data := make([]byte, 2*65536+pageHeaderSize+64)
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	m, valid := metas(data[:n])
	return m, valid, nil
}

// pageSizes are the page sizes bbolt may have used: the OS page size of
// the machine that created the file, usually 4 KiB.
func pageSizes() []int {
	out := []int{os.Getpagesize()}
	for _, ps := range []int{4096, 8192, 16384, 32768, 65536} {
		if ps != out[0] {
			out = append(out, ps)
		}
	}
	return out
}

// parseMeta reads the meta page at off, or nil when it is not a valid one.
func parseMeta(data []byte, off int) *rawMeta {
	if off+pageHeaderSize+64 > len(data) || le.Uint16(data[off+8:]) != flagMeta {
		return nil
	}
	b := data[off+pageHeaderSize:]
	if le.Uint32(b) != boltMagic || le.Uint32(b[4:]) != boltVersion {
		return nil
	}
	h := fnv.New64a()
	h.Write(b[:metaSumLen])
	if h.Sum64() != le.Uint64(b[metaSumLen:]) {
		return nil
	}
	m := &rawMeta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
	if m.pageSize < 1024 || m.pageSize > 1<<20 {
		return nil
	}
	return m
}

// guessPageSize picks the size at which most pages name themselves
// correctly, when both meta pages are lost.
func (f *rawFile) guessPageSize() int {
	best, bestN := pageSizes()[0], -1
	for _, ps := range pageSizes() {
		n := 0
		for id := 2; (id+1)*ps <= len(f.data); id++ {
			if _, err := f.page(uint64(id), ps); err == nil {
				n++
			}
		}
		if n > bestN {
			best, bestN = ps, n
		}
	}
	return best
}

// pages is how many whole pages the file holds.
func (f *rawFile) pages() uint64 { return uint64(len(f.data) / f.psize) }

var errPastEnd = errors.New("past the end of the file")

// page returns page id (with its overflow pages) at page size ps: an
// error when it lies past the end of the file, names another id or has
// no valid type.
func (f *rawFile) page(id uint64, ps int) ([]byte, error) {
	off := id * uint64(ps)
	if off+pageHeaderSize > uint64(len(f.data)) || off/uint64(ps) != id {
		return nil, errPastEnd
	}
	h := f.data[off:]
	if got := le.Uint64(h); got != id {
		return nil, fmt.Errorf("it names itself page %d", got)
	}
	switch le.Uint16(h[8:]) {
	case flagBranch, flagLeaf, flagMeta, flagFreelist:
	default:
		return nil, fmt.Errorf("unknown page type %#x", le.Uint16(h[8:]))
	}
	end := off + uint64(ps)*(uint64(le.Uint32(h[12:]))+1)
	if end > uint64(len(f.data)) || end < off {
		return nil, errPastEnd
	}
	return f.data[off:end], nil
}

// element is one entry of a branch or leaf page.
type element struct {
	key, value []byte // value: a leaf's value, or a bucket's header (and inline page)
	child      uint64 // a branch element's page
	bucket     bool   // a leaf element holding a bucket
}

// elements decodes the entries of a branch or leaf page p (a file page or
// an inline bucket's page); it fails on entries that point outside p.
func elements(p []byte) (leaf bool, out []element, err error) {
	if len(p) < pageHeaderSize {
		return false, nil, errors.New("short page")
	}
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	if flags != flagBranch && flags != flagLeaf {
		return false, nil, fmt.Errorf("not a branch or leaf page (type %#x)", flags)
	}
	leaf = flags == flagLeaf
	if pageHeaderSize+count*elementSize > len(p) {
		return leaf, nil, fmt.Errorf("%d entries do not fit in the page", count)
	}
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := p[at : at+elementSize]
		var el element
		var pos, ksize, vsize uint64
		if leaf {
			el.bucket = le.Uint32(e)&flagBucketLeaf != 0
			pos, ksize, vsize = uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		} else {
			pos, ksize = uint64(le.Uint32(e)), uint64(le.Uint32(e[4:]))
			el.child = le.Uint64(e[8:])
		}
		start := uint64(at) + pos
		if start+ksize+vsize > uint64(len(p)) {
			return leaf, out, fmt.Errorf("entry %d points past the page", i)
		}
		el.key = p[start : start+ksize]
		el.value = p[start+ksize : start+ksize+vsize]
		if el.bucket && len(el.value) < bucketHeaderSize {
			return leaf, out, fmt.Errorf("entry %d: a bucket header of %d bytes", i, len(el.value))
		}
		out = append(out, el)
	}
	return leaf, out, nil
}

// freePages lists the pages the meta's freelist names (stale copies), or
// nil when it cannot be read.
func (f *rawFile) freePages() map[uint64]bool {
	if f.meta == nil {
		return nil
	}
	p, err := f.page(f.meta.freelist, f.psize)
	if err != nil || le.Uint16(p[8:]) != flagFreelist {
		return nil
	}
	at, count := pageHeaderSize, uint64(le.Uint16(p[10:]))
	if count == 0xFFFF {
		if len(p) < at+8 {
			return nil
		}
		count, at = le.Uint64(p[at:]), at+8
	}
	if count > uint64(len(p)-at)/8 {
		return nil
	}
	free := make(map[uint64]bool, count)
	for i := range count {
		free[le.Uint64(p[at+int(i)*8:])] = true
	}
	return free
}
