package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berth-dev/berth/store"
)

// errNoIndex means the area holds no stored index yet.
var errNoIndex = errors.New("no stored index")

// loaded is a stored index read back into memory.
type loaded struct {
	snap  *snapshot
	files map[string]*fileEntry
	next  uint32
}

// loadOrReset loads the stored index. If it is missing, the index starts
// empty; if it is unusable (corrupt, or of another format) it is dropped,
// the reason is logged and kept in the status, and the index starts empty
// (the catch-up then rebuilds it).
func (ix *Index) loadOrReset() error {
	start := time.Now()
	l, err := ix.load()
	switch {
	case err == nil:
		ix.log.Debug("search: index loaded", "files", l.snap.files, "chunks", l.snap.live,
			"took", time.Since(start).Round(time.Microsecond))
	case errors.Is(err, errNoIndex):
		ix.dict = newTermDict()
		l = loaded{snap: &snapshot{}, files: map[string]*fileEntry{}}
	default:
		ix.dropUnusable(err)
		l = loaded{snap: &snapshot{}, files: map[string]*fileEntry{}}
	}
	ix.w.files, ix.w.next = l.files, l.next
	for id := uint32(0); id < l.next; id++ {
		if int(id) >= len(l.snap.chunks) || l.snap.chunks[id] == nil {
			ix.w.free = append(ix.w.free, id)
		}
	}
	l.snap.computeNorms(ix.rk)
	l.snap.rare = newRareCache()
	ix.snap.Store(l.snap)
	return nil
}

// dropUnusable drops a stored index found unusable for reason: the reason
// is logged and kept in the status, and the next catch-up rebuilds the
// index from the files. The caller holds writeMu (or is Open).
func (ix *Index) dropUnusable(reason error) {
	ix.stateMu.Lock()
	ix.rebuild = reason.Error()
	ix.stateMu.Unlock()
	ix.log.Warn("search: stored index is unusable; rebuilding it from the files", "reason", reason)
	ix.dict = newTermDict()
	if derr := ix.area.Drop(); derr != nil {
		ix.log.Error("search: cannot drop the stored index; will overwrite it", "err", derr)
	}
	ix.w.dirty = true
}

// load reads the stored index and checks that it hangs together, its
// posting lists included.
func (ix *Index) load() (loaded, error) {
	l := loaded{snap: &snapshot{}, files: map[string]*fileEntry{}}
	var base baseTerms
	var sp *storedPostings
	var sums []uint32
	err := ix.area.View(func(b *store.Bucket) error {
		meta := b.Bucket(bucketMeta)
		if !b.Exists() || isEmpty(b) {
			return errNoIndex
		}
		if !meta.Exists() {
			return fmt.Errorf("%w: stored index is incomplete (its last full write was interrupted)", errCorrupt)
		}
		raw := meta.Get(keyFormat)
		if len(raw) != 4 {
			return fmt.Errorf("%w: no format version", errCorrupt)
		}
		if f := binary.BigEndian.Uint32(raw); f != indexFormat {
			return fmt.Errorf("stored index format %d, this build uses %d", f, indexFormat)
		}
		d := open(meta.Get(keyNextChunk))
		l.next = uint32(d.uvarint())
		if err := d.done(); err != nil {
			return fmt.Errorf("next chunk id: %w", err)
		}
		if t, err := time.Parse(time.RFC3339Nano, string(meta.Get(keyUpdatedAt))); err == nil {
			l.snap.updated = t
		}
		if err := loadFiles(b.Bucket(bucketFiles), l.files); err != nil {
			return err
		}
		if err := loadChunks(b.Bucket(bucketChunks), l.snap, l.next); err != nil {
			return err
		}
		var err error
		base, sp, sums, err = loadStoredPostings(b.Bucket(bucketPostings), l.snap.chunks)
		return err
	})
	if err != nil {
		return l, err
	}
	// The postings are checked after the transaction, on every core,
	// while the files' sections are (check reads no list).
	verified := make(chan error, 1)
	go func() { verified <- sp.verify(&base, sums) }()
	cerr := check(l, &ix.w)
	if err := <-verified; err != nil {
		clear(ix.w.fileNos) // numbered by check for an index now dropped
		return l, err
	}
	if cerr != nil {
		return l, cerr
	}
	ix.dict = newTermDictOver(base)
	l.snap.stored, l.snap.terms = sp, sp.len()
	l.snap.fileNos = uint32(len(ix.w.fileNos))
	return l, nil
}

// loadFiles reads the files bucket into files. The entries are allocated
// fileBlock at a time, and their chunk ids share slices of about idBlock.
func loadFiles(b *store.Bucket, files map[string]*fileEntry) error {
	var block []fileEntry
	var ids []uint32
	return b.ForEach(func(k, v []byte) error {
		if len(block) == 0 {
			block = make([]fileEntry, fileBlock)
		}
		if cap(ids)-len(ids) < 64 {
			ids = make([]uint32, 0, idBlock)
		}
		f := &block[0]
		block = block[1:]
		if err := decodeFileInto(f, v, &ids); err != nil {
			return fmt.Errorf("file %q: %w", k, err)
		}
		files[string(k)] = f
		return nil
	})
}

// fileBlock and idBlock size loadFiles's allocations.
const (
	fileBlock = 256
	idBlock   = 4096
)

// loadChunks reads the chunks bucket into s: the sections' records, not
// their texts, which are read when a search returns them (texts.go). The
// records are copied into slabs of about chunkSlabBytes whose strings the
// chunks share: a reopen makes a few allocations a slab, not several a
// section. A slab stays in memory while any section of it does.
func loadChunks(b *store.Bucket, s *snapshot, next uint32) error {
	s.chunks = make([]*chunk, next)
	var slab strings.Builder
	var block []chunk
	var strs []string
	return b.ForEach(func(k, v []byte) error {
		id, err := chunkID(k)
		if err != nil {
			return err
		}
		if id >= next {
			return fmt.Errorf("%w: chunk id %d beyond next id %d", errCorrupt, id, next)
		}
		d := open(v)
		if d.err != nil {
			return fmt.Errorf("chunk %d: %w", id, d.err)
		}
		if slab.Cap()-slab.Len() < len(d.b) {
			slab = strings.Builder{}
			slab.Grow(max(chunkSlabBytes, len(d.b)))
		}
		slab.Write(d.b)
		// The slab never moves (it had room), so the strings decoded
		// over it stay valid as more records are written after them.
		d.whole = slab.String()
		if len(block) == 0 {
			block = make([]chunk, chunkBlock)
		}
		if cap(strs)-len(strs) < 64 {
			strs = make([]string, 0, chunkBlock*4)
		}
		c := &block[0]
		block = block[1:]
		if err := decodeChunkFrom(c, &d, &strs); err != nil {
			return fmt.Errorf("chunk %d: %w", id, err)
		}
		c.textID = id
		s.chunks[id] = c
		s.addChunk(c)
		return nil
	})
}

// chunkSlabBytes is the size of the slabs loadChunks copies sections into;
// chunkBlock the number of chunks it allocates at once.
const (
	chunkSlabBytes = 256 << 10
	chunkBlock     = 256
)

// check verifies that every chunk belongs to exactly one file, sets each
// chunk's file from the entry that names it (the file's key, so that the
// two compare by pointer), and numbers the files of the chunks (see
// [writer.numberFile]).
func check(l loaded, w *writer) error {
	seen := 0
	for rel, f := range l.files {
		if f.skip != "" {
			l.snap.skipped++
		} else {
			l.snap.files++
		}
		if len(f.chunks) == 0 {
			continue
		}
		no, ok := w.fileNos[rel]
		if !ok {
			no = uint32(len(w.fileNos))
			w.fileNos[rel] = no
		}
		for _, id := range f.chunks {
			if int(id) >= len(l.snap.chunks) || l.snap.chunks[id] == nil || l.snap.chunks[id].file != "" {
				return fmt.Errorf("%w: file %q names chunk %d, missing or named twice", errCorrupt, rel, id)
			}
			c := l.snap.chunks[id]
			c.file, c.fileNo = rel, no
			seen++
		}
	}
	if seen != l.snap.live {
		return fmt.Errorf("%w: %d chunks stored, %d named by files", errCorrupt, l.snap.live, seen)
	}
	return nil
}

// isEmpty reports whether a bucket has no keys at its top level.
func isEmpty(b *store.Bucket) bool {
	empty := true
	b.ForEach(func(_, _ []byte) error {
		empty = false
		return errStop
	})
	return empty
}

var errStop = errors.New("stop")
