package search

import "crypto/sha1"

// staged is what a view read of a checkout while git wrote it (held its
// index's lock): the files the watcher named meanwhile, each read, hashed,
// and its new content chunked and analysed (Shared.pending), to be added
// to the shared content index with the view's change once git is done, in
// one commit rather than one a batch (a long checkout's first flushFrom
// chunks are indexed while git writes the rest). Searches still answer from the old
// view. Once git lets go, the index it just wrote vouches for a staged file
// whose stat data equals its entry and whose blob id equals the one of the
// bytes read: that file is not read again (see takeStaged). Every content
// staged is released after the view's change (see unstage): what no view
// took, such as a file read while git was still writing it, is forgotten.
type staged struct {
	files map[string]stagedFile // path -> what was read last
	keys  []string              // every content key staged, once per read
}

// stagedFile is one file as a view read it during a checkout: the hash of
// its bytes and their git blob id. Its stat data when read is not kept:
// only git's index, vouching for the file as it is once git is done, may
// let the bytes read stand for it.
type stagedFile struct {
	hash [16]byte
	blob [sha1.Size]byte
}

// stage reads the files paths name (files or folders, as the watcher names
// them) and adds their new content to the shared content index, held by no
// view yet (see staged). The caller does not hold writeMu.
func (ix *Index) stage(st *staged, paths []string) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed {
		return
	}
	ix.opts.Shared.stage(ix, st, ix.readUpdates(ix.expand(paths, nil), true))
}

// stage records ups, v's, in st, and chunks and analyses the content they
// bring that the content index lacks: it is pending (or indexed, held by no
// view, see flushFrom), and st holds it until unstage.
// The caller holds v.writeMu.
func (sh *Shared) stage(v *Index, st *staged, ups []fileUpdate) {
	core := sh.core
	core.writeMu.Lock()
	defer core.writeMu.Unlock()
	if st.files == nil {
		st.files = make(map[string]stagedFile, len(ups))
	}
	var add []fileUpdate
	adding := make(map[string]bool)
	sh.mu.Lock()
	for _, u := range ups {
		k := indexedKey(u.rel, u.entry)
		if k == "" || u.blob == nil {
			delete(st.files, u.rel) // read again once git is done
			continue
		}
		_, indexed := core.w.files[k]
		_, pending := sh.pending[k]
		if !indexed && !pending && !adding[k] {
			if u.chunks == nil && u.data == "" {
				delete(st.files, u.rel) // its content was dropped meanwhile
				continue
			}
			add = append(add, sh.contentUpdate(k, u, v.w.files[u.rel]))
			adding[k] = true
		}
		sh.staged[k]++
		st.keys = append(st.keys, k)
		st.files[u.rel] = stagedFile{hash: u.entry.hash, blob: *u.blob}
	}
	sh.mu.Unlock()
	core.analyseAhead(add)
	for _, u := range add {
		sh.pending[u.rel] = u
		sh.pendingChunks += len(u.chunks)
	}
	sh.flush(flushFrom)
}

// flushStaged indexes the content pending (see staged) once it holds
// idleFlushFrom chunks: called while git still writes and no batch of its
// is waiting, the commit takes time git spends anyway. The caller does
// not hold writeMu.
func (ix *Index) flushStaged() {
	sh := ix.opts.Shared
	sh.core.writeMu.Lock()
	defer sh.core.writeMu.Unlock()
	sh.flush(idleFlushFrom)
}

// flush indexes the content pending (see staged), as content no view
// holds yet (the checkouts that staged it keep it until unstage), when it
// holds least chunks or more. The caller holds core.writeMu.
func (sh *Shared) flush(least int) {
	if sh.pendingChunks < least || len(sh.pending) == 0 {
		return
	}
	flush := make([]fileUpdate, 0, len(sh.pending))
	for k := range sh.pending {
		u, _ := sh.takePending(k)
		flush = append(flush, u)
	}
	if err := sh.core.commitWith(flush, nil); err != nil {
		sh.log.Debug("search: cannot index a checkout's content while git writes it", "err", err)
	}
}

// flushFrom is the number of chunks pending (see staged) from which a
// checkout's content is indexed while git writes the rest: the commit
// after git lets go then adds the rest alone. Below it, one commit after
// git adds all, rather than one a batch each copying the posting lists of
// the common terms again. idleFlushFrom is the least a flush indexes when
// the checkout's batches so far are staged and git still writes (see
// whileExists): that commit is made while waiting for git.
const (
	flushFrom     = 4096
	idleFlushFrom = 1024
)

// takePending removes the content k from the content pending (see
// staged) and returns it. The caller holds core.writeMu.
func (sh *Shared) takePending(k string) (fileUpdate, bool) {
	u, ok := sh.pending[k]
	if ok {
		delete(sh.pending, k)
		sh.pendingChunks -= len(u.chunks)
	}
	return u, ok
}

// analyseAhead sets the terms of the chunks of ups (interned), content updates of a
// shared content index, but of those equal to a section their path holds
// (they are kept as they are, see sameChunks); a chunk equal in its terms
// to one its path holds takes them from the postings (see reusedTerms).
// The caller holds writeMu.
func (ix *Index) analyseAhead(ups []fileUpdate) {
	if len(ups) == 0 {
		return
	}
	old := ix.snap.Load()
	same := ix.sameChunks(ups, old)
	kept := func(c *chunk) bool { _, ok := same[c]; return ok }
	var fresh []*chunk
	for _, u := range ups {
		for _, c := range u.chunks {
			if !kept(c) {
				fresh = append(fresh, c)
			}
		}
	}
	terms := ix.termsOf(ups, old, fresh, kept)
	for i := range ups {
		u := &ups[i]
		u.terms = make([][]termIDCount, len(u.chunks))
		for j, c := range u.chunks {
			u.terms[j] = terms[c]
		}
	}
}

// unstage releases the content st staged: what no view holds is dropped.
func (sh *Shared) unstage(st *staged) error {
	if st == nil || len(st.keys) == 0 {
		return nil
	}
	core := sh.core
	core.writeMu.Lock()
	defer core.writeMu.Unlock()
	var drops []fileUpdate
	sh.mu.Lock()
	for _, k := range st.keys {
		if sh.staged[k]--; sh.staged[k] > 0 {
			continue
		}
		delete(sh.staged, k)
		sh.takePending(k)
		if _, indexed := core.w.files[k]; indexed && sh.refs[k] == 0 {
			drops = append(drops, fileUpdate{rel: k, reindex: true})
		}
	}
	sh.mu.Unlock()
	st.keys, st.files = nil, nil
	if len(drops) == 0 {
		return nil
	}
	return core.commitWith(drops, nil)
}

// takeStaged splits paths into the updates of staged files that git's index
// gi vouches for as the walk disk found them, with the blob read, and the
// paths to read again: a file changed after it was read, or one git's
// index does not vouch for. The caller holds writeMu.
func (ix *Index) takeStaged(paths []string, disk map[string]diskFile, gi *gitIndex, st *staged) (ups []fileUpdate, read []string) {
	if st == nil || len(st.files) == 0 || gi == nil {
		return nil, paths
	}
	for _, rel := range paths {
		sf, ok := st.files[rel]
		df, found := disk[rel]
		if ok && found {
			var e gitEntry
			e, ok = gi.unchanged(rel, df)
			ok = ok && e.blob == sf.blob
		}
		if !ok || !found {
			read = append(read, rel)
			continue
		}
		blob := sf.blob
		ups = append(ups, fileUpdate{rel: rel, entry: &fileEntry{size: df.size, mtime: df.mtime, hash: sf.hash}, reindex: true, blob: &blob})
	}
	return ups, read
}

// unstage releases what st staged for ix (see Shared.unstage); st may be
// nil.
func (ix *Index) unstage(st *staged) {
	if st == nil {
		return
	}
	if err := ix.opts.Shared.unstage(st); err != nil {
		ix.log.Warn("search: cannot drop the content a checkout staged and no worktree took", "err", err)
	}
}
