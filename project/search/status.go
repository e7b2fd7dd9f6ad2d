package search

import (
	"errors"
	"time"
)

// Index states, as reported in [Status.State].
const (
	StateLoading  = "loading"  // reading the stored index
	StateIndexing = "indexing" // bringing it up to date with the files
	StateReady    = "ready"    // up to date; the watcher keeps it so
	StateClosed   = "closed"
)

// Progress counts the files the current catch-up has examined.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Status describes an index for the control API and the dashboard.
type Status struct {
	State        string    `json:"state"`
	Files        int       `json:"files"`         // files indexed
	SkippedFiles int       `json:"skipped_files"` // files seen but not indexed (too large, not UTF-8)
	Chunks       int       `json:"chunks"`        // sections indexed
	Terms        int       `json:"terms"`         // distinct terms
	LastUpdate   time.Time `json:"last_update,omitzero"`
	Progress     Progress  `json:"progress"`
	// FilesRead counts the files read from disk since Open: 0 after
	// reopening an unchanged project.
	FilesRead int64 `json:"files_read"`
	// RebuildReason says why the stored index was dropped at Open, if it was.
	RebuildReason string `json:"rebuild_reason,omitempty"`
	// LastError is the last indexing or persistence error, if any.
	LastError string `json:"last_error,omitempty"`
	// Warnings name files (and source folders) not indexed because their
	// symlinks lead outside the project, with the fix.
	Warnings []string `json:"warnings,omitempty"`
	// Embedded counts the sections with a vector, when the broker has an
	// embedding server (search.embeddings); EmbedError is its last failure.
	Embedded   int    `json:"embedded,omitempty"`
	EmbedError string `json:"embed_error,omitempty"`
}

// Status returns the index's current status.
func (ix *Index) Status() Status {
	s := ix.snap.Load()
	ix.vec.mu.RLock()
	embedded, embedErr := len(ix.vec.byChunk), ix.vec.lastErr
	ix.vec.mu.RUnlock()
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	return Status{
		Embedded:      embedded,
		EmbedError:    embedErr,
		State:         ix.state,
		Files:         s.files,
		SkippedFiles:  s.skipped,
		Chunks:        s.live,
		Terms:         s.terms,
		LastUpdate:    s.updated,
		Progress:      ix.progress,
		FilesRead:     ix.filesRead.Load(),
		RebuildReason: ix.rebuild,
		LastError:     ix.lastErr,
		Warnings:      ix.outside.list(),
	}
}

// setState records a new state and progress and wakes watchers of changes.
func (ix *Index) setState(state string, p Progress) {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	if ix.state == StateClosed {
		return
	}
	ix.state, ix.progress = state, p
	close(ix.changed)
	ix.changed = make(chan struct{})
}

// setProgress updates the progress of the current catch-up.
func (ix *Index) setProgress(done, total int) {
	ix.stateMu.Lock()
	state := ix.state
	ix.stateMu.Unlock()
	ix.setState(state, Progress{Done: done, Total: total})
}

func (ix *Index) currentProgress() Progress {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	return ix.progress
}

// watchProgress returns the current progress and a channel closed at the
// next change.
func (ix *Index) watchProgress() (Progress, <-chan struct{}) {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	return ix.progress, ix.changed
}

func (ix *Index) noteErr(err error) {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	ix.lastErr = err.Error()
	var se *saveError
	ix.lastErrSave = errors.As(err, &se)
}

// noteSaved clears the last error once the stored copy is whole again, if
// that error was a failure to save it.
func (ix *Index) noteSaved() {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	if ix.lastErrSave {
		ix.lastErr, ix.lastErrSave = "", false
	}
}
