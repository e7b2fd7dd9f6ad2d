package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
	var sc *copiedChunks
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
		var err error
		if sc, err = loadChunks(b.Bucket(bucketChunks), l.snap, l.next); err != nil {
			return err
		}
		base, sp, sums, err = loadStoredPostings(b.Bucket(bucketPostings), l.snap.chunks)
		return err
	})
	if err != nil {
		return l, err
	}
	// The records and lists are checked and decoded after the
	// transaction, on every core at once.
	strs := sc.strings()
	nc, np := batches(len(sc.recs)), batches(sp.len())
	lens := make([]snapshot, nc)
	err = inParallel(nc+np, func(i int) error {
		if i < nc {
			lo, hi := piece(i, len(sc.recs))
			var err error
			lens[i], err = sc.decode(strs, lo, hi)
			return err
		}
		lo, hi := piece(i-nc, sp.len())
		return sp.verify(&base, sums, lo, hi)
	})
	if err != nil {
		return l, err
	}
	for _, n := range lens {
		l.snap.live += n.live
		l.snap.totalBody += n.totalBody
		l.snap.totalHead += n.totalHead
	}
	ix.dict = newTermDictOver(base)
	l.snap.stored, l.snap.terms = sp, sp.len()
	if err := check(l, &ix.w); err != nil {
		return l, err
	}
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

// copiedChunks are the section records loadChunks copied out of the read
// transaction, decoded after it by decode.
type copiedChunks struct {
	slabs [][]byte   // the records' payloads, back to back
	recs  []chunkRec // in key order
}

// chunkRec is where one copied record lies, and its stored checksum.
type chunkRec struct {
	c             *chunk
	slab          int
	off, end, sum uint32
}

// loadChunks copies the chunks bucket's records (the sections' records,
// not their texts, which are read when a search returns them: texts.go)
// into slabs of about chunkSlabBytes, and gives every stored id its chunk,
// not yet decoded: the records are checked and decoded after the read
// transaction, on every core at once (decode).
func loadChunks(b *store.Bucket, s *snapshot, next uint32) (*copiedChunks, error) {
	s.chunks = make([]*chunk, next)
	sc := &copiedChunks{}
	var slab []byte
	var block []chunk
	err := b.ForEach(func(k, v []byte) error {
		id, err := chunkID(k)
		if err != nil {
			return err
		}
		if id >= next {
			return fmt.Errorf("%w: chunk id %d beyond next id %d", errCorrupt, id, next)
		}
		if len(v) < 4 {
			return fmt.Errorf("chunk %d: %w: %d bytes", id, errCorrupt, len(v))
		}
		body := v[:len(v)-4]
		if cap(slab)-len(slab) < len(body) {
			slab = make([]byte, 0, max(chunkSlabBytes, len(body)))
			sc.slabs = append(sc.slabs, nil)
		}
		off := len(slab)
		slab = append(slab, body...)
		sc.slabs[len(sc.slabs)-1] = slab
		if len(block) == 0 {
			block = make([]chunk, chunkBlock)
		}
		c := &block[0]
		block = block[1:]
		c.textID = id
		s.chunks[id] = c
		sc.recs = append(sc.recs, chunkRec{c, len(sc.slabs) - 1, uint32(off), uint32(len(slab)), binary.BigEndian.Uint32(v[len(v)-4:])})
		return nil
	})
	return sc, err
}

// strings returns each slab as a string, which the decoded records' strings
// share: a slab stays in memory while any section of it does. The strings
// are views of the slabs, not copies: a slab is written only by loadChunks,
// and never after it has returned.
func (sc *copiedChunks) strings() []string {
	out := make([]string, len(sc.slabs))
	for i, slab := range sc.slabs {
		if len(slab) > 0 {
			out[i] = unsafe.String(&slab[0], len(slab))
		}
	}
	return out
}

// decode checks and decodes records lo to hi, their strings cut from strs
// (see strings), and returns the lengths they add to the snapshot.
func (sc *copiedChunks) decode(strs []string, lo, hi int) (lens snapshot, err error) {
	shared := make([]string, 0, (hi-lo)*4)
	for _, r := range sc.recs[lo:hi] {
		body := sc.slabs[r.slab][r.off:r.end]
		if crc32.Checksum(body, castagnoli) != r.sum {
			return lens, fmt.Errorf("chunk %d: %w: checksum mismatch", r.c.textID, errCorrupt)
		}
		// The string ends where the record does, as dec.str expects.
		d := dec{b: body, whole: strs[r.slab][:r.end]}
		if err := decodeChunkFrom(r.c, &d, &shared); err != nil {
			return lens, fmt.Errorf("chunk %d: %w", r.c.textID, err)
		}
		lens.addChunk(r.c)
	}
	return lens, nil
}

// chunkSlabBytes is the size of the slabs loadChunks copies sections into;
// chunkBlock the number of chunks it allocates at once; loadBatch the
// records or lists a reopen checks as one piece of work.
const (
	chunkSlabBytes = 256 << 10
	chunkBlock     = 256
	loadBatch      = 512
)

// inParallel runs fn(i) for i in [0, n) on GOMAXPROCS goroutines and
// returns the error of the lowest i that failed.
func inParallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = fn(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// batches returns the number of loadBatch pieces of n items.
func batches(n int) int { return (n + loadBatch - 1) / loadBatch }

// piece returns the bounds of batch i of n items.
func piece(i, n int) (lo, hi int) { return i * loadBatch, min(n, (i+1)*loadBatch) }

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
