package project

import (
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"weak"
)

// fileTable is a catalog's table of served files, in URI order. Once made
// it is never changed, so the catalogs whose tables are equal share one:
// the sibling worktrees of a repository mostly hold the same files (same
// paths, titles, sizes and content hashes), and each would otherwise keep
// a copy of some 56 bytes a file.
type fileTable struct {
	files []fileEntry
}

// entries is the table's files; none for a nil table.
func (t *fileTable) entries() []fileEntry {
	if t == nil {
		return nil
	}
	return t.files
}

// fileTables is the tables the catalogs hold now, by a digest of their
// entries. An entry goes once no catalog holds its table.
var fileTables = tableCache{byDigest: map[uint64]weakTable{}}

type weakTable = weak.Pointer[fileTable]

type tableCache struct {
	mu       sync.Mutex
	byDigest map[uint64]weakTable // one table a digest: the last made
}

// intern returns a table equal to files: one a catalog holds already, or a
// new one holding files.
func (tc *tableCache) intern(files []fileEntry) *fileTable {
	if len(files) == 0 {
		return &fileTable{}
	}
	d := tc.digest(files)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if t := tc.byDigest[d].Value(); t != nil && slices.Equal(t.files, files) {
		return t
	}
	t := &fileTable{files: files}
	wp := weak.Make(t)
	tc.byDigest[d] = wp
	runtime.AddCleanup(t, tc.forget, tableKey{d, wp})
	return t
}

// tableSeed seeds the tables' digests.
var tableSeed = maphash.MakeSeed()

type tableKey struct {
	digest uint64
	table  weakTable
}

// forget drops a table no catalog holds any more, unless another took its
// digest since.
func (tc *tableCache) forget(k tableKey) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.byDigest[k.digest] == k.table {
		delete(tc.byDigest, k.digest)
	}
}

// digest hashes every field of every entry, in order.
func (tc *tableCache) digest(files []fileEntry) uint64 {
	var h maphash.Hash
	h.SetSeed(tableSeed)
	var n [8]byte
	for _, f := range files {
		h.WriteString(f.path)
		h.WriteByte(0)
		h.WriteString(f.title)
		h.WriteByte(0)
		binary.LittleEndian.PutUint64(n[:], uint64(f.size))
		h.Write(n[:])
		h.Write(f.hash[:])
	}
	return h.Sum64()
}
