package search

import (
	"encoding/binary"
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
			if err := bk.chunks.Delete(chunkKey(id)); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		for _, id := range d.putChunks {
			if err := bk.chunks.Put(chunkKey(id), encodeChunk(ns.chunks[id])); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		for _, tid := range d.terms {
			if err := putPostings(bk.postings, ix.dict.term(tid), ns.postings[tid]); err != nil {
				return err
			}
		}
		return putMeta(bk.meta, ix.w.next, ns.updated)
	})
	if err != nil {
		ix.w.dirty = true
		return fmt.Errorf("store index: %w", err)
	}
	return nil
}

// persistFull replaces the stored index with ns and files, in one
// transaction. pending names files whose entries are not yet in files (a
// commit in progress); it may be nil.
func (ix *Index) persistFull(ns *snapshot, files map[string]*fileEntry, pending *delta) error {
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
	err := ix.area.Update(func(b *store.Bucket) error {
		for _, name := range []string{bucketMeta, bucketFiles, bucketChunks, bucketPostings} {
			if err := b.DeleteBucket(name); err != nil {
				return fmt.Errorf("clear %s: %w", name, err)
			}
		}
		bk, err := indexBuckets(b)
		if err != nil {
			return err
		}
		paths := make([]string, 0, len(merged))
		for p := range merged {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			if err := bk.files.Put([]byte(p), encodeFile(merged[p])); err != nil {
				return fmt.Errorf("file %s: %w", p, err)
			}
		}
		for id, c := range ns.chunks {
			if c == nil {
				continue
			}
			if err := bk.chunks.Put(chunkKey(uint32(id)), encodeChunk(c)); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		type termPostings struct {
			term string
			p    *postingList
		}
		terms := make([]termPostings, 0, ns.terms)
		for tid, p := range ns.postings {
			if p.len() > 0 {
				terms = append(terms, termPostings{ix.dict.term(uint32(tid)), p})
			}
		}
		slices.SortFunc(terms, func(a, b termPostings) int { return strings.Compare(a.term, b.term) })
		for _, t := range terms {
			if err := putPostings(bk.postings, t.term, t.p); err != nil {
				return err
			}
		}
		return putMeta(bk.meta, ix.w.next, ns.updated)
	})
	if err != nil {
		ix.w.dirty = true
		return fmt.Errorf("store index: %w", err)
	}
	ix.w.dirty = false
	return nil
}

// buckets are the nested buckets of the index area.
type buckets struct{ meta, files, chunks, postings *store.Bucket }

func indexBuckets(b *store.Bucket) (buckets, error) {
	var bk buckets
	var err error
	for _, x := range []struct {
		name string
		dst  **store.Bucket
	}{{bucketMeta, &bk.meta}, {bucketFiles, &bk.files}, {bucketChunks, &bk.chunks}, {bucketPostings, &bk.postings}} {
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
