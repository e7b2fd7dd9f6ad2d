package search

import "time"

// File is one indexed markdown file.
type File struct {
	Path    string    // relative to the project root, slash-separated
	Size    int64     // bytes
	ModTime time.Time // as last seen
	// Hash is a prefix of the content's SHA-256: it changes when the
	// content does.
	Hash [16]byte
	// Title is the file's front matter title, else its first heading.
	Title string
}

// Files lists the indexed files (files seen but not indexed, such as ones
// too large, are left out), in no particular order. It waits for an update
// in progress.
func (ix *Index) Files() []File {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	s := ix.snap.Load()
	out := make([]File, 0, len(ix.w.files))
	for rel, e := range ix.w.files {
		if e.skip != "" {
			continue
		}
		f := File{Path: rel, Size: e.size, ModTime: time.Unix(0, e.mtime), Hash: e.hash}
		if len(e.chunks) > 0 {
			if c := s.chunks[e.chunks[0]]; c != nil {
				f.Title = c.title
				if f.Title == "" && len(c.heading) > 0 {
					f.Title = c.heading[0]
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// FilesChanged returns a channel that is closed at the next change to the
// indexed files (a catch-up batch, an applied edit), so that a caller can
// wait for it and then read [Index.Files] again.
func (ix *Index) FilesChanged() <-chan struct{} {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	return ix.filesChanged
}

// noteFilesChanged wakes the waiters of FilesChanged.
func (ix *Index) noteFilesChanged() {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	close(ix.filesChanged)
	ix.filesChanged = make(chan struct{})
}
