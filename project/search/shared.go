package search

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"math/bits"
	"sync"
	"time"
	"unique"

	"github.com/berth-dev/berth/project/procs"
	"github.com/berth-dev/berth/store"
)

// Shared is the content index of one git repository's worktrees: their
// sections stored by content, so that a file identical in several worktrees
// is chunked and indexed once. Each worktree's [Index] (opened with
// [Options.Shared]) is a view of it: its files, each naming the content it
// holds. A search in a worktree ranks the shared content and keeps its
// view's sections; content no view holds is dropped.
//
// Content is keyed by path and hash: a section's file, front matter labels
// and workflow phase come from its path, so the same bytes at two paths are
// two contents. Term statistics (the number of sections, their average
// length, each term's document frequency) are over the shared content,
// not one view's.
//
// The content index is held in memory; each view keeps no stored index of
// its own.
type Shared struct {
	core *Index

	mu   sync.Mutex     // guards refs, staged and blobs; taken after core.writeMu
	refs map[string]int // content key -> views holding it
	// staged counts, by content key, the checkouts under way that read
	// the content (see staged): it stays indexed while they last, held
	// by a view or not.
	staged map[string]int
	// blobs names, by path and git blob id, the hash of content some view
	// read (and holds): a sibling whose git index vouches for the same
	// blob at the path need not read its file.
	blobs  map[string][16]byte
	blobOf map[string]string // content key -> its key in blobs
	// pending holds, by content key, the content a checkout under way
	// read and analysed that the content index lacks (see staged): it is
	// added with the view change that takes it, or earlier once it holds
	// flushFrom chunks (pendingChunks). Guarded by core.writeMu.
	pending       map[string]fileUpdate
	pendingChunks int
	log           *slog.Logger
}

// NewShared returns an empty content index. Only the worktrees of one
// confirmed repository may share it: a view sees no other view's files, but
// term statistics are common to all.
func NewShared(log *slog.Logger) *Shared {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	core := &Index{
		log:          log,
		dict:         newTermDict(),
		rk:           rankingOf(Options{}),
		state:        StateReady,
		filesChanged: make(chan struct{}),
		changed:      make(chan struct{}),
		ready:        make(chan struct{}),
		done:         make(chan struct{}),
		embedDone:    make(chan struct{}),
		cancel:       func() {},
	}
	close(core.ready)
	close(core.done)
	close(core.embedDone)
	core.w.files = map[string]*fileEntry{}
	core.w.an = newAnalyzer()
	core.w.counts = make(map[string]fieldCounts)
	core.w.fileNos = make(map[string]uint32)
	core.vec = vectors{byChunk: map[*chunk][]float32{}, kick: make(chan struct{}, 1)}
	core.snap.Store(&snapshot{})
	return &Shared{core: core, refs: map[string]int{}, staged: map[string]int{}, blobs: map[string][16]byte{}, blobOf: map[string]string{}, pending: map[string]fileUpdate{}, log: log}
}

// SharedStatus counts what a content index holds, for benchmarks and the
// control API.
type SharedStatus struct {
	Views    int // worktrees attached
	Contents int // distinct (path, content) pairs indexed
	Chunks   int // sections indexed
	Terms    int // distinct terms
}

// Status reports what the content index holds now.
func (sh *Shared) Status() SharedStatus {
	s := sh.core.snap.Load()
	sh.mu.Lock()
	n := len(sh.refs)
	sh.mu.Unlock()
	return SharedStatus{Views: len(s.views), Contents: n, Chunks: s.live, Terms: s.terms}
}

// appendKey appends to dst the key of a path and a sum of its bytes: the
// path, a zero byte and the sum. Content keys (a content hash) and the
// keys of blobs (a git blob id) are both made so.
func appendKey(dst []byte, rel string, sum []byte) []byte {
	return append(append(append(dst, rel...), 0), sum...)
}

// contentKey names one content: a path and the hash of its bytes.
func contentKey(rel string, hash [16]byte) string {
	var buf [128]byte // the key, on the stack for most paths
	return string(appendKey(buf[:0], rel, hash[:]))
}

// indexedKey is the content key of e, "" when e holds no indexed content.
func indexedKey(rel string, e *fileEntry) string {
	if e == nil || e.skip != "" {
		return ""
	}
	return contentKey(rel, e.hash)
}

// known reports whether some view holds the content, so that a view reading
// the same bytes need not chunk them.
func (sh *Shared) known(rel string, hash [16]byte) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.refs[contentKey(rel, hash)] > 0
}

// byBlob returns the hash of the content at rel whose git blob id is id,
// when a view read it and some view holds it.
func (sh *Shared) byBlob(rel string, id [20]byte) ([16]byte, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var buf [128]byte // the key, on the stack for most paths
	h, ok := sh.blobs[string(appendKey(buf[:0], rel, id[:]))]
	return h, ok
}

// heldOnly splits ups into the updates the content index can take now and
// the paths to read first: those of unread updates whose content no view
// holds any more. The caller holds core.writeMu.
func (sh *Shared) heldOnly(ups []fileUpdate) ([]fileUpdate, []string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var key []byte // a content key, made here rather than allocated for each update
	held := func(u fileUpdate) bool {
		if u.entry == nil || u.entry.skip != "" {
			return false
		}
		key = appendKey(key[:0], u.rel, u.entry.hash[:])
		return sh.refs[string(key)] > 0
	}
	var reread []string
	var kept []fileUpdate // nil while every update is kept: ups is returned
	for i, u := range ups {
		if u.unread && !held(u) {
			if kept == nil {
				kept = append(make([]fileUpdate, 0, len(ups)), ups[:i]...)
			}
			reread = append(reread, u.rel)
			continue
		}
		if kept != nil {
			kept = append(kept, u)
		}
	}
	if kept == nil {
		return ups, nil
	}
	return kept, reread
}

// viewBits is one view in a content snapshot: the chunk ids it holds.
type viewBits struct {
	words []uint64
}

func (v *viewBits) has(id uint32) bool {
	w := int(id >> 6)
	return w < len(v.words) && v.words[w]&(1<<(id&63)) != 0
}

func (v *viewBits) set(id uint32) {
	w := int(id >> 6)
	if w >= len(v.words) {
		v.words = append(v.words, make([]uint64, w+1-len(v.words))...)
	}
	v.words[w] |= 1 << (id & 63)
}

func (v *viewBits) count() int {
	n := 0
	for _, w := range v.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// searchState is the index a search of ix ranks with and the snapshot it
// reads: ix's own, or for a view the content index's, restricted to the
// view's sections. Both come from one atomic load, so a search sees one
// consistent view.
func (ix *Index) searchState() (*Index, *snapshot) {
	if ix.opts.Shared == nil {
		return ix, ix.snap.Load()
	}
	core := ix.opts.Shared.core
	s := core.snap.Load()
	vs := *s
	vs.view = s.views[ix]
	if vs.view == nil {
		vs.view = &viewBits{}
	}
	return core, &vs
}

// commitView applies a view's file updates as one change: new content is
// indexed in the content index, content no view holds any more is dropped,
// and the view's new sections are swapped in with them, so that a search of
// any view sees the state before or after, never a mix. The caller holds
// v.writeMu; it takes the content index's writeMu, never reading a file
// under it. It returns the paths of unread updates whose content no view
// holds any more (dropped since the view found it known): the caller reads
// them and commits them again.
func (sh *Shared) commitView(v *Index, ups []fileUpdate) ([]string, error) {
	core := sh.core
	core.writeMu.Lock()
	defer core.writeMu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	ups, reread := sh.heldOnly(ups)
	next := maps.Clone(v.w.files)
	if len(next) == 0 {
		next = make(map[string]*fileEntry, len(ups)) // a first catch-up: no growth step by step
	}
	delta := make(map[string]int, len(ups))
	fresh := map[string]fileUpdate{}
	changed := false
	for _, u := range ups {
		old := v.w.files[u.rel]
		if u.entry == nil && old == nil {
			continue
		}
		if !u.reindex && u.entry != nil && old != nil && u.entry.same(old) {
			continue
		}
		changed = true
		if ok, nk := indexedKey(u.rel, old), indexedKey(u.rel, u.entry); ok != nk || u.reindex {
			if ok != "" {
				delta[ok]--
			}
			if nk != "" {
				delta[nk]++
				if _, indexed := core.w.files[nk]; u.reindex && !indexed {
					fresh[nk] = u // only content not indexed yet is made from it
				}
			}
		}
		if u.entry == nil {
			delete(next, u.rel)
		} else {
			// One string for a path in every view holding it (and in
			// each worktree's catalog of resources, which keeps the
			// index's paths).
			u.entry.path = unique.Make(u.rel)
			next[u.entry.path.Value()] = u.entry
		}
	}
	if !changed {
		return reread, nil
	}
	sh.mu.Lock()
	// Content no view holds any more is dropped in a commit of its own
	// after the view's: dropping a section means analysing its text again
	// to find its posting lists, and the view's searches need not wait for
	// that (no view's sections name that content any more).
	var coreUps, drops []fileUpdate
	for k, d := range delta {
		before := sh.refs[k]
		after := before + d
		switch {
		case after <= 0:
			delete(sh.refs, k)
			delete(sh.blobs, sh.blobOf[k])
			delete(sh.blobOf, k)
		default:
			sh.refs[k] = after
		}
		_, indexed := core.w.files[k]
		switch {
		case after > 0 && !indexed:
			up, staged := sh.takePending(k) // read and analysed during the checkout
			if !staged {
				up = sh.contentUpdate(k, fresh[k], v.w.files[fresh[k].rel])
			}
			coreUps = append(coreUps, up)
		case after <= 0 && indexed && sh.staged[k] == 0:
			drops = append(drops, fileUpdate{rel: k, reindex: true})
		}
	}
	for _, u := range ups {
		if u.blob == nil {
			continue
		}
		if k := indexedKey(u.rel, u.entry); sh.refs[k] > 0 {
			bk := string(appendKey(nil, u.rel, u.blob[:]))
			sh.blobs[bk] = u.entry.hash
			sh.blobOf[k] = bk
		}
	}
	sh.mu.Unlock()
	err := sh.commitContent(coreUps, func(ns *snapshot, entry func(key []byte) *fileEntry) {
		vb := &viewBits{}
		vs := &snapshot{chunks: ns.chunks, terms: ns.terms, updated: ns.updated, fileNos: ns.fileNos}
		var key []byte // each file's content key, made here rather than allocated for each
		for rel, e := range next {
			vs.files, vs.skipped = countFile(vs.files, vs.skipped, e, +1)
			if e.skip != "" {
				continue
			}
			key = appendKey(key[:0], rel, e.hash[:])
			ce := entry(key)
			if ce == nil {
				continue
			}
			e.chunks = ce.chunks
			for _, id := range ce.chunks {
				vb.set(id)
			}
			vs.live += len(ce.chunks)
		}
		views := make(map[*Index]*viewBits, len(ns.views)+1)
		maps.Copy(views, ns.views)
		views[v] = vb
		ns.views = views
		v.snap.Store(vs)
	})
	if len(drops) > 0 {
		err = errors.Join(err, core.commitWith(drops, nil))
	}
	v.w.files = next
	v.noteFilesChanged()
	return reread, err
}

// commitContent commits ups to the content index and calls hook with the
// new snapshot before it is swapped in (see Index.commitWith). With no
// update (a sibling's attach, a switch to content the siblings hold) the
// content is what it was: the snapshot is the current one with hook's
// change, its sections, postings and norms shared rather than copied and
// computed again. The caller holds core.writeMu.
func (sh *Shared) commitContent(ups []fileUpdate, hook func(ns *snapshot, entry func(key []byte) *fileEntry)) error {
	core := sh.core
	if len(ups) > 0 {
		return core.commitWith(ups, hook)
	}
	ns := *core.snap.Load()
	ns.updated = time.Now().UTC()
	hook(&ns, func(k []byte) *fileEntry { return core.w.files[string(k)] })
	core.snap.Store(&ns)
	return nil
}

// contentUpdate is the content index's update adding content k, from the
// view's update u; prev is the view's entry for the path before (nil if
// none), whose sections the new ones may equal. When the view found the
// content known and did not chunk it, and it was dropped since, it is
// chunked here (no file is read).
func (sh *Shared) contentUpdate(k string, u fileUpdate, prev *fileEntry) fileUpdate {
	e := &fileEntry{size: u.entry.size, hash: u.entry.hash}
	chunks := u.chunks
	if chunks == nil && u.data != "" {
		var err error
		if chunks, err = buildChunks(u.rel, u.data); err != nil {
			sh.log.Warn("search: file not indexed", "path", u.rel, "reason", err)
		}
	}
	up := fileUpdate{rel: k, entry: e, chunks: chunks, reindex: true}
	if prev != nil {
		up.prev = prev.chunks
	}
	return up
}

// detach drops a closing view: its sections leave every snapshot after
// this one, and the content only it held is dropped.
func (sh *Shared) detach(v *Index) {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	ups := make([]fileUpdate, 0, len(v.w.files))
	for rel := range v.w.files {
		ups = append(ups, fileUpdate{rel: rel, reindex: true})
	}
	if _, err := sh.commitView(v, ups); err != nil {
		v.log.Warn("search: cannot drop a worktree's view of the shared index", "err", err)
	}
	core := sh.core
	core.writeMu.Lock()
	defer core.writeMu.Unlock()
	s := core.snap.Load()
	ns := *s
	ns.views = make(map[*Index]*viewBits, len(s.views))
	maps.Copy(ns.views, s.views)
	delete(ns.views, v)
	core.snap.Store(&ns)
}

// openView starts ix as a view of opts.Shared: it holds no stored index of
// its own; its first catch-up reads every file, and only content no sibling
// holds is chunked and indexed.
func (ix *Index) openView(ctx context.Context) {
	ix.w.files = map[string]*fileEntry{}
	ix.dict = ix.opts.Shared.core.dict
	ix.snap.Store(&snapshot{})
	ix.setState(StateIndexing, Progress{})
	ix.embedDone = make(chan struct{})
	close(ix.embedDone)
	ix.vec = vectors{byChunk: map[*chunk][]float32{}, kick: make(chan struct{}, 1)}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ix.cancel = cancel
	go ix.catchUpView(bg)
}

// catchUpView is a view's first catch-up: a walk of the sources, then every
// file read (in parallel) and committed in batches.
func (ix *Index) catchUpView(ctx context.Context) {
	defer close(ix.done)
	procs.Enter()
	defer procs.Leave()
	start := time.Now()
	ix.dropOwnIndex()
	// Git's index is read while the sources are walked: its entries
	// vouch for a file by the stat data git recorded and its own write
	// time, whether it is read before the walk's stat calls or after.
	gic := make(chan *gitIndex, 1)
	go func() { gic <- ix.gitIndex() }()
	disk, err := ix.scan(ctx)
	gi := <-gic
	if err == nil {
		err = ix.refreshView(ctx, disk, gi)
	}
	ix.finishCatchUp(ctx, start, err)
}

// dropOwnIndex deletes the index the project stored when it had one of its
// own: a view keeps none, and the stale copy would only take room.
func (ix *Index) dropOwnIndex() {
	area := ix.opts.DB.Area(ix.opts.ProjectID, "index")
	stored := false
	if err := area.View(func(b *store.Bucket) error { stored = b.Exists(); return nil }); err != nil || !stored {
		return
	}
	if err := area.Drop(); err != nil {
		ix.log.Warn("search: cannot drop the project's own stored index, unused while it shares its repository's", "err", err)
		return
	}
	ix.log.Info("search: dropped the project's own stored index: it shares its repository's index now")
}

// refreshView brings a view up to date with a walk of the sources, with
// gi, git's index of the worktree (nil: none usable).
func (ix *Index) refreshView(ctx context.Context, disk map[string]diskFile, gi *gitIndex) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	changed := ix.changedOnDisk(disk)
	ix.setProgress(0, len(changed))
	// The files git's index vouches for cost no read: they are committed
	// at once, as one change, rather than in batches whose every commit
	// copies the view and the snapshot's tables again.
	ups, read := ix.splitVouched(changed, disk, gi)
	if len(ups) > 0 && len(read) > 0 && len(read) <= batchFiles {
		// The few files git's index does not vouch for (ones git wrote in
		// the clock tick of its index, edits since) are read now and
		// committed with the others: one commit of the view, not two.
		ups = append(ups, ix.readUpdates(read, false)...)
		read = nil
	}
	if len(ups) > 0 {
		if err := ix.commitUnread(ups); err != nil {
			return err
		}
		ix.setProgress(len(ups), len(changed))
	}
	return ix.inBatchesAfter(ctx, len(ups), len(changed), read, func(batch []string) error {
		return ix.commitUnread(ix.readUpdates(batch, false))
	})
}

// gitIndex reads the worktree's git index for the view's files; nil when
// there is none or it cannot be used (every file is read then).
func (ix *Index) gitIndex() *gitIndex {
	if ix.opts.GitDir == "" {
		return nil
	}
	gi, err := readGitIndex(ix.opts.GitDir, ix.opts.indexable)
	if err != nil {
		ix.log.Debug("search: git's index not used; reading every file", "err", err)
		return nil
	}
	return gi
}

// vouched returns the updates of paths: a file that git's index vouches
// for (see gitIndex.unchanged) as a walk found it (disk), with a blob some
// view read at the same path, is taken as that content without being
// read; the others are read (see readUpdate for force). The caller holds
// writeMu.
func (ix *Index) vouched(paths []string, disk map[string]diskFile, gi *gitIndex, force bool) []fileUpdate {
	ups, read := ix.splitVouched(paths, disk, gi)
	return append(ups, ix.readUpdates(read, force)...)
}

// splitVouched returns the unread updates of the paths git's index vouches
// for (see vouched) and the paths to read. The caller holds writeMu.
func (ix *Index) splitVouched(paths []string, disk map[string]diskFile, gi *gitIndex) (ups []fileUpdate, read []string) {
	if gi == nil {
		return nil, paths
	}
	ups = make([]fileUpdate, 0, len(paths))
	entries := make([]fileEntry, len(paths)) // one allocation for the files' entries
	for _, rel := range paths {
		df, ok := disk[rel]
		var h [16]byte
		if ok {
			var e gitEntry
			if e, ok = gi.unchanged(rel, df); ok {
				h, ok = ix.opts.Shared.byBlob(rel, e.blob)
			}
		}
		if !ok {
			read = append(read, rel)
			continue
		}
		e := &entries[len(ups)]
		*e = fileEntry{size: df.size, mtime: df.mtime, hash: h}
		ups = append(ups, fileUpdate{rel: rel, entry: e, reindex: true, unread: true})
	}
	return ups, read
}

// commitUnread commits a view's updates, then reads and commits the files
// of unread updates whose content was dropped meanwhile. The caller holds
// writeMu.
func (ix *Index) commitUnread(ups []fileUpdate) error {
	reread, err := ix.opts.Shared.commitView(ix, ups)
	if err != nil || len(reread) == 0 {
		return err
	}
	_, err = ix.opts.Shared.commitView(ix, ix.readUpdates(reread, true))
	return err
}

// readUpdates reads paths in parallel. The caller holds writeMu.
func (ix *Index) readUpdates(paths []string, force bool) []fileUpdate {
	out := make([]fileUpdate, len(paths))
	dirs := openDirRoots(ix.opts.Root)
	defer dirs.Close()
	var wg sync.WaitGroup
	next := make(chan int)
	workers, done := procs.Workers(len(paths))
	defer done()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = ix.readUpdateIn(dirs, paths[i], ix.w.files[paths[i]], force)
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
