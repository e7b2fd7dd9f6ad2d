package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/project/procs"
	"github.com/berth-dev/berth/store"
)

// ErrClosed is returned by calls on a closed [Index].
var ErrClosed = errors.New("search index is closed")

// ErrOff reports a search in a project whose rag tool group is off (it
// has no index).
var ErrOff = errors.New("search_standards is off for this project: add rag to mcp.enabled_tool_groups in .praxis-os/config.yaml")

// Index is one project's standards index: compact postings in memory, a
// durable copy in the store. Searches run concurrently with updates and see
// either the state before an update or the state after it, never a mix.
//
// Lock order: writeMu, then stateMu. The term dictionary has its own lock,
// taken last. vec.mu (the sections' vectors) is taken alone, or before
// stateMu (Status).
type Index struct {
	opts Options
	log  *slog.Logger
	area *store.Area
	dict *termDict
	rk   *ranking

	// snap is the state searches read. Only the holder of writeMu stores it.
	snap atomic.Pointer[snapshot]
	// warm holds a reopened index's texts once they are read (warmtexts.go).
	warm atomic.Pointer[warmTexts]

	// writeMu serializes every change: the catch-up, Apply and Close. It
	// guards w and the index area of the store.
	writeMu sync.Mutex
	w       writer
	closed  bool
	// isClosed mirrors closed for searches, which take no lock.
	isClosed atomic.Bool

	stateMu  sync.Mutex // guards the fields below
	state    string
	progress Progress
	changed  chan struct{} // closed and replaced whenever state or progress change
	// filesChanged is closed and replaced after every commit.
	filesChanged chan struct{}
	lastErr      string
	lastErrSave  bool // lastErr is a failure to save, mended by the next save
	rebuild      string

	filesRead atomic.Int64
	outside   outsideReport // paths whose links lead outside the project
	ready     chan struct{} // closed when the first catch-up has finished
	readyErr  error         // set before ready is closed
	cancel    context.CancelFunc
	done      chan struct{} // closed when the catch-up goroutine has returned

	vec       vectors
	embedDone chan struct{} // closed when the embedding loop has returned

	// onCheck, when set (by tests), is called with the search's context at
	// every check a search makes of it.
	onCheck func(context.Context)
}

// writer is the state only the holder of writeMu touches.
type writer struct {
	files  map[string]*fileEntry
	free   []uint32 // free chunk ids
	next   uint32   // lowest chunk id never used
	an     *analyzer
	counts map[string]fieldCounts
	// fileNos numbers every path a chunk was made of, for the per-file
	// arrays of a search (see addFilePrior); numbers are never reused.
	fileNos map[string]uint32
	// shares counts, by chunk id, the file entries holding the chunk
	// besides the first: in a shared content index, two contents of a
	// path hold one chunk for a section equal in both (see sameChunks).
	shares map[uint32]int
	// dirty is set when a store write failed: the stored copy no longer
	// matches memory, so the next write rewrites it whole.
	dirty bool
}

// numberFile sets c's file number. The caller holds writeMu (or is Open).
func (w *writer) numberFile(c *chunk) {
	no, ok := w.fileNos[c.file]
	if !ok {
		no = uint32(len(w.fileNos))
		w.fileNos[c.file] = no
	}
	c.fileNo = no
}

// Open loads the project's persisted index (fast: no file is read), then
// brings it up to date with the files on disk in the background. Files whose
// size and modification time are unchanged are not read again. Searches made
// before that catch-up ends wait for it (see [Index.WaitReady]). A stored
// index that is corrupt or of an older format is dropped, logged and rebuilt.
func Open(ctx context.Context, opts Options) (*Index, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	ix := &Index{
		opts:         opts,
		log:          opts.Logger, // the engine's: it already names the project
		area:         opts.DB.Area(opts.ProjectID, "index"),
		dict:         newTermDict(),
		rk:           rankingOf(opts),
		state:        StateLoading,
		filesChanged: make(chan struct{}),
		changed:      make(chan struct{}),
		ready:        make(chan struct{}),
		done:         make(chan struct{}),
	}
	if opts.Shared != nil {
		// A view analyses nothing itself: the content index does.
		ix.opts.Embedder, ix.area = nil, nil
		ix.openView(ctx)
		return ix, nil
	}
	ix.w.an = newAnalyzer()
	ix.w.counts = make(map[string]fieldCounts)
	ix.w.fileNos = make(map[string]uint32)
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ix.cancel = cancel
	// The walk of the sources (stat calls) needs nothing loaded: it runs
	// while the stored index is read.
	scanned := make(chan scanResult, 1)
	go func() {
		disk, err := ix.scan(bg)
		scanned <- scanResult{disk, err}
	}()
	if err := ix.loadOrReset(); err != nil {
		cancel()
		<-scanned
		return nil, err
	}
	ix.setState(StateIndexing, Progress{})
	ix.embedDone = make(chan struct{})
	ix.vec = vectors{byChunk: map[*chunk][]float32{}, kick: make(chan struct{}, 1)}
	if opts.Embedder != nil {
		go func() {
			defer close(ix.embedDone)
			ix.embedLoop(bg)
		}()
	} else {
		close(ix.embedDone)
	}
	go ix.catchUp(bg, scanned)
	return ix, nil
}

// WaitReady blocks until the first catch-up after [Open] has finished, or ctx
// ends. It returns the catch-up's error, if any.
func (ix *Index) WaitReady(ctx context.Context) error {
	select {
	case <-ix.ready:
		return ix.readyErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready reports whether the first catch-up has finished.
func (ix *Index) Ready() bool {
	select {
	case <-ix.ready:
		return true
	default:
		return false
	}
}

// scanResult is a walk of the sources.
type scanResult struct {
	disk map[string]diskFile
	err  error
}

// catchUp indexes what changed since the stored copy, as the walk of the
// sources found it.
func (ix *Index) catchUp(ctx context.Context, scanned <-chan scanResult) {
	defer close(ix.done)
	procs.Enter()
	defer procs.Leave()
	start := time.Now()
	sr := <-scanned
	err := sr.err
	if err == nil {
		err = ix.refresh(ctx, sr.disk)
	}
	ix.writeMu.Lock()
	ix.w.an.forgetStems()
	if s := ix.snap.Load(); s.postings != nil && !ix.closed {
		// No search runs before ready: the term ids may change.
		s, ix.dict = compact(s, ix.dict)
		s.rare = newRareCache()
		ix.snap.Store(s)
	}
	ix.writeMu.Unlock()
	ix.finishCatchUp(ctx, start, err)
	ix.kickEmbedder()
	ix.loadTexts(ctx)
}

// finishCatchUp logs the first catch-up's outcome and marks the index ready.
func (ix *Index) finishCatchUp(ctx context.Context, start time.Time, err error) {
	st := ix.Status()
	if err != nil {
		ix.noteErr(err)
		if ctx.Err() == nil {
			ix.log.Error("search: indexing failed; serving what is indexed", "err", err)
		}
	} else {
		ix.log.Info("search: index ready", "files", st.Files, "chunks", st.Chunks,
			"files_read", st.FilesRead, "shared", ix.opts.Shared != nil, "took", time.Since(start).Round(time.Millisecond))
	}
	ix.setState(StateReady, ix.currentProgress())
	ix.readyErr = err
	close(ix.ready)
}

// Apply brings the given paths (relative to the root; files or folders,
// created, edited, renamed or deleted) up to date, as one atomic change.
// Paths outside the sources are ignored. Changed files are always read (a
// write within the same mtime tick is not missed); identical content is not
// re-indexed.
func (ix *Index) Apply(ctx context.Context, changed []string) error {
	return ix.apply(ctx, changed, nil, nil)
}

// apply is Apply that, in a view of a shared index given disk (a walk of
// the sources made after a git checkout), reads only the files that git's
// new index does not vouch for: those it vouches for with the blob read
// while git wrote them (st, see staged) or with a blob a sibling read
// (see Index.vouched) are not read again.
func (ix *Index) apply(ctx context.Context, changed []string, disk map[string]diskFile, st *staged) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	paths := ix.expand(changed, disk)
	if len(paths) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ix.opts.Shared != nil {
		var gi *gitIndex
		if disk != nil {
			gi = ix.gitIndex()
		}
		ups, read := ix.takeStaged(paths, disk, gi, st)
		ups = append(ups, ix.vouched(read, disk, gi, true)...)
		if err := ix.commitUnread(ups); err != nil {
			ix.noteErr(err)
			return fmt.Errorf("search: apply %d paths: %w", len(paths), err)
		}
		return nil
	}
	ups := make([]fileUpdate, 0, len(paths))
	for _, rel := range paths {
		ups = append(ups, ix.readUpdate(rel, ix.w.files[rel], true))
	}
	if err := ix.commit(ups); err != nil {
		ix.noteErr(err)
		return fmt.Errorf("search: apply %d paths: %w", len(paths), err)
	}
	return nil
}

// Close stops the background catch-up, waits for it and for any update in
// progress, and makes further calls fail with [ErrClosed]. It does not close
// the store.
func (ix *Index) Close() error {
	ix.cancel()
	<-ix.done
	<-ix.embedDone
	if sh := ix.opts.Shared; sh != nil && !ix.isClosed.Load() {
		sh.detach(ix)
	}
	ix.writeMu.Lock()
	ix.closed = true
	ix.isClosed.Store(true)
	ix.writeMu.Unlock()
	ix.setState(StateClosed, ix.currentProgress())
	return nil
}

func errIsClosed(err error) bool { return errors.Is(err, ErrClosed) }
