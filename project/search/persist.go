package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/store"
)

// delta lists what one commit changed, for the store.
type delta struct {
	files     []fileChange
	delChunks []uint32 // removed chunk ids (deleted before putChunks are written)
	putChunks []uint32 // added chunk ids
	terms     []uint32 // term ids whose postings changed
}

// fileChange is a file's new entry, nil when it left the index.
type fileChange struct {
	rel   string
	entry *fileEntry
}

// persist writes one commit's changes to the store in one transaction, or
// the whole of ns when the stored copy is known to be stale. The caller
// holds writeMu.
func (ix *Index) persist(ns *snapshot, d *delta) error {
	if ix.area == nil {
		return nil // a shared content index, held in memory
	}
	if ix.w.dirty {
		return ix.persistFull(ns, ix.w.files, d)
	}
	err := ix.area.Update(func(b *store.Bucket) error {
		bk, err := indexBuckets(b)
		if err != nil {
			return err
		}
		for _, f := range d.files {
			if f.entry == nil {
				err = bk.files.Delete([]byte(f.rel))
			} else {
				err = bk.files.Put([]byte(f.rel), encodeFile(f.entry))
			}
			if err != nil {
				return fmt.Errorf("file %s: %w", f.rel, err)
			}
		}
		for _, id := range d.delChunks {
			if err := errors.Join(bk.chunks.Delete(chunkKey(id)), bk.texts.Delete(chunkKey(id))); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		for _, id := range d.putChunks {
			c := ns.chunks[id]
			if err := errors.Join(bk.chunks.Put(chunkKey(id), encodeChunk(c)), bk.texts.Put(chunkKey(id), encodeText(c.text))); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		// In key order: bbolt appends to a page far faster than it
		// inserts at random places.
		slices.SortFunc(d.terms, func(a, b uint32) int { return strings.Compare(ix.dict.term(a), ix.dict.term(b)) })
		for _, tid := range d.terms {
			if err := putPostings(bk.postings, ix.dict.term(tid), ns.postingsOf(tid)); err != nil {
				return err
			}
		}
		return putMeta(bk.meta, ix.w.next, ns.updated)
	})
	if err != nil {
		ix.w.dirty = true
		return &saveError{err}
	}
	ix.noteSaved()
	return nil
}

// persistFull replaces the stored index with ns and files. pending names
// files whose entries are not yet in files (a commit in progress); it may be
// nil. The write is split into transactions of about fullTxBytes so that a
// large index does not hold all its dirty pages in memory at once: the first
// clears the area, the last writes meta. An interrupted rewrite leaves no
// meta bucket, which the next load reports and rebuilds. The caller holds
// writeMu.
func (ix *Index) persistFull(ns *snapshot, files map[string]*fileEntry, pending *delta) error {
	if ix.area == nil {
		return nil
	}
	merged := files
	if pending != nil && len(pending.files) > 0 {
		merged = make(map[string]*fileEntry, len(files)+len(pending.files))
		for k, v := range files {
			merged[k] = v
		}
		for _, f := range pending.files {
			if f.entry == nil {
				delete(merged, f.rel)
			} else {
				merged[f.rel] = f.entry
			}
		}
	}
	err := ix.writeFull(ns, merged)
	if err != nil {
		ix.w.dirty = true
		return &saveError{err}
	}
	ix.w.dirty = false
	ix.noteSaved()
	return nil
}

// saveError is a failure to write the index to the store (a full disk,
// say): the next save writes the whole index and mends it.
type saveError struct{ err error }

func (e *saveError) Error() string { return "store index: " + e.err.Error() }
func (e *saveError) Unwrap() error { return e.err }

// fullTxBytes bounds the encoded bytes written by one transaction of a full
// rewrite.
const fullTxBytes = 16 << 20

// kv is one record of a full rewrite.
type kv struct{ k, v []byte }

func (ix *Index) writeFull(ns *snapshot, files map[string]*fileEntry) error {
	// The texts of sections loaded without them are read before the
	// area is cleared (a full rewrite of a reopened index, after a failed
	// write); one that cannot be read is left out, and reported by the
	// search that needs it.
	chunks := ns.chunks
	if slices.ContainsFunc(chunks, func(c *chunk) bool { return c != nil && c.stored }) {
		chunks, _ = ix.withTexts(chunks)
	}
	if err := ix.area.Update(func(b *store.Bucket) error {
		for _, name := range []string{bucketMeta, bucketFiles, bucketChunks, bucketPostings, bucketTexts} {
			if err := b.DeleteBucket(name); err != nil {
				return fmt.Errorf("clear %s: %w", name, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// Each bucket is written in ascending key order, in batches.
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	i := 0
	if err := ix.writeSorted(bucketFiles, func() (kv, bool) {
		if i == len(paths) {
			return kv{}, false
		}
		p := paths[i]
		i++
		return kv{[]byte(p), encodeFile(files[p])}, true
	}); err != nil {
		return err
	}
	for _, bucket := range []struct {
		name   string
		encode func(c *chunk) []byte
	}{
		{bucketChunks, encodeChunk},
		{bucketTexts, func(c *chunk) []byte {
			if c.stored {
				return nil // its text could not be read
			}
			return encodeText(c.text)
		}},
	} {
		id := 0
		if err := ix.writeSorted(bucket.name, func() (kv, bool) {
			for id < len(chunks) && chunks[id] == nil {
				id++
			}
			if id == len(chunks) {
				return kv{}, false
			}
			id++
			return kv{chunkKey(uint32(id - 1)), bucket.encode(chunks[id-1])}, true
		}); err != nil {
			return err
		}
	}
	type termPostings struct {
		term string
		p    *postingList
	}
	terms := make([]termPostings, 0, ns.terms)
	for tid := range uint32(ix.dict.size()) {
		if p := ns.postingsOf(tid); p.len() > 0 {
			terms = append(terms, termPostings{ix.dict.term(tid), p})
		}
	}
	slices.SortFunc(terms, func(a, b termPostings) int { return strings.Compare(a.term, b.term) })
	t := 0
	if err := ix.writeSorted(bucketPostings, func() (kv, bool) {
		if t == len(terms) {
			return kv{}, false
		}
		t++
		return kv{[]byte(terms[t-1].term), encodePostings(terms[t-1].p)}, true
	}); err != nil {
		return err
	}
	return ix.area.Update(func(b *store.Bucket) error {
		meta, err := b.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return putMeta(meta, ix.w.next, ns.updated)
	})
}

// writeSorted writes the records next yields, in ascending key order, to
// the named bucket in transactions of about fullTxBytes; a record of nil
// value is skipped.
func (ix *Index) writeSorted(name string, next func() (kv, bool)) error {
	more := true
	for more {
		err := ix.area.Update(func(b *store.Bucket) error {
			bk, err := b.CreateBucket(name)
			if err != nil {
				return err
			}
			bk.SetFillPercent(1) // keys arrive in order: pack the pages
			size := 0
			for size < fullTxBytes {
				r, ok := next()
				if !ok {
					more = false
					return nil
				}
				if r.v == nil {
					continue // nothing to store under r.k
				}
				if err := bk.Put(r.k, r.v); err != nil {
					return fmt.Errorf("%s %q: %w", name, r.k, err)
				}
				size += len(r.k) + len(r.v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// buckets are the nested buckets of the index area.
type buckets struct{ meta, files, chunks, postings, texts *store.Bucket }

func indexBuckets(b *store.Bucket) (buckets, error) {
	var bk buckets
	var err error
	for _, x := range []struct {
		name string
		dst  **store.Bucket
	}{{bucketMeta, &bk.meta}, {bucketFiles, &bk.files}, {bucketChunks, &bk.chunks}, {bucketPostings, &bk.postings}, {bucketTexts, &bk.texts}} {
		if *x.dst, err = b.CreateBucket(x.name); err != nil {
			return bk, err
		}
	}
	return bk, nil
}

func putPostings(b *store.Bucket, term string, p *postingList) error {
	var err error
	if p.len() == 0 {
		err = b.Delete([]byte(term))
	} else {
		err = b.Put([]byte(term), encodePostings(p))
	}
	if err != nil {
		return fmt.Errorf("postings of %q: %w", term, err)
	}
	return nil
}

func putMeta(b *store.Bucket, next uint32, updated time.Time) error {
	var e enc
	e.uvarint(uint64(next))
	if err := b.Put(keyNextChunk, e.seal()); err != nil {
		return err
	}
	if err := b.Put(keyFormat, binary.BigEndian.AppendUint32(nil, indexFormat)); err != nil {
		return err
	}
	return b.Put(keyUpdatedAt, []byte(updated.UTC().Format(time.RFC3339Nano)))
}
