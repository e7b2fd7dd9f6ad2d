package search

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/procs"
)

// analyzed is one file of a bulk build, ready to be numbered.
type analyzed struct {
	update fileUpdate
	chunks []*chunk      // the file's chunks (new or kept)
	terms  [][]termCount // per chunk
}

// rebuildAll builds the whole index again from disk: unchanged files
// (same size and mtime as their entry) keep their chunks without being read,
// the others are read; everything is analyzed in parallel, numbered afresh
// and written to the store in one transaction, then swapped in. The caller
// holds writeMu.
func (ix *Index) rebuildAll(ctx context.Context, disk map[string]diskFile) error {
	w := &ix.w
	old := ix.snap.Load()
	paths := make([]string, 0, len(disk))
	for rel := range disk {
		paths = append(paths, rel)
	}
	slices.Sort(paths)

	files := make(map[string]*fileEntry, len(paths))
	var chunks []*chunk
	var lists []postingBuilder
	ns := &snapshot{}
	nfiles, nskipped := 0, 0
	workers, done := procs.Workers(len(paths))
	defer done()
	ans := make([]*analyzer, workers)
	for i := range ans {
		ans[i] = newAnalyzer()
	}
	batch := make([]analyzed, 0, batchFiles)
	for i := 0; i < len(paths); i += batchFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ix.opts.beforeBatch != nil {
			ix.opts.beforeBatch()
		}
		part := paths[i:min(i+batchFiles, len(paths))]
		batch = batch[:len(part)]
		ix.analyzeBatch(part, old, ans, batch)
		for j := range batch {
			a := &batch[j]
			e := a.update.entry
			if e == nil {
				continue
			}
			files[a.update.rel] = e
			nfiles, nskipped = countFile(nfiles, nskipped, e, +1)
			ids := make([]uint32, len(a.chunks))
			for k, c := range a.chunks {
				id := uint32(len(chunks))
				ids[k] = id
				chunks = append(chunks, c)
				w.numberFile(c)
				ns.addChunk(c)
				for _, tc := range a.terms[k] {
					tid := ix.dict.intern(tc.term)
					if int(tid) >= len(lists) {
						lists = append(lists, make([]postingBuilder, int(tid)+1-len(lists))...)
					}
					lists[tid].ids = append(lists[tid].ids, id)
					lists[tid].tfs = append(lists[tid].tfs, tc.body)
					lists[tid].hts = append(lists[tid].hts, tc.head)
				}
			}
			e.chunks = ids
			a.terms = nil
		}
		ix.setProgress(i+len(part), len(paths))
	}

	ns.chunks, ns.files, ns.skipped = chunks, nfiles, nskipped
	ns.postings = make([]*postingList, ix.dict.size())
	for tid := range lists {
		if n := len(lists[tid].ids); n > 0 {
			// Exact-size copies: the builders' append slack would double the memory.
			ns.postings[tid] = &postingList{ids: slices.Clone(lists[tid].ids), tfs: slices.Clone(lists[tid].tfs), hts: slices.Clone(lists[tid].hts)}
			lists[tid] = postingBuilder{}
			ns.terms++
		}
	}
	ns.computeNorms(ix.rk)
	ns.updated = time.Now().UTC()
	ns.fileNos = uint32(len(w.fileNos))

	w.next = uint32(len(chunks))
	w.free = nil
	err := ix.persistFull(ns, files, nil)
	ns.rare = newRareCache()
	ix.snap.Store(ns)
	w.files = files
	ix.noteFilesChanged()
	return err
}

// postingBuilder collects one term's postings in id order during a bulk build.
type postingBuilder struct {
	ids []uint32
	tfs []uint16
	hts []uint8
}

// analyzeBatch reads (when changed) and analyzes the files of one batch in
// parallel, one analyzer per worker, filling out[i] for paths[i].
func (ix *Index) analyzeBatch(paths []string, old *snapshot, ans []*analyzer, out []analyzed) {
	var wg sync.WaitGroup
	next := make(chan int)
	for _, an := range ans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts := make(map[string]fieldCounts)
			for i := range next {
				out[i] = ix.analyzeFile(paths[i], old, an, counts)
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
}

// analyzeFile brings one file up to date for a bulk build.
func (ix *Index) analyzeFile(rel string, old *snapshot, an *analyzer, counts map[string]fieldCounts) analyzed {
	prev := ix.w.files[rel]
	u := ix.readUpdate(rel, prev, false)
	a := analyzed{update: u}
	if u.entry == nil || u.entry.skip != "" {
		return a
	}
	if !u.reindex {
		// Unchanged: keep the chunks (they are immutable), re-analyze them;
		// a stored one is copied with its text, stored again under a new id.
		for _, id := range prev.chunks {
			a.chunks = append(a.chunks, old.chunks[id])
		}
		var read []bool
		if a.chunks, read = ix.withTexts(a.chunks); slices.Contains(read, false) {
			ix.warnUnread(a.chunks, read)
			u = ix.readUpdate(rel, nil, false)
			a.update = u
			if u.entry == nil || u.entry.skip != "" {
				return a
			}
		}
	}
	if u.reindex {
		a.chunks = u.chunks
	}
	a.terms = make([][]termCount, len(a.chunks))
	for k, c := range a.chunks {
		tcs, bodyLen, headLen := an.chunkTerms(c, ix.rk, counts)
		if u.reindex {
			c.bodyLen, c.headLen = bodyLen, headLen
		}
		a.terms[k] = tcs
	}
	return a
}
