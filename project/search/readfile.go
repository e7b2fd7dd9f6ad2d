package search

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"unicode/utf8"
)

// fileUpdate is the new state of one path, as read from disk.
type fileUpdate struct {
	rel   string
	entry *fileEntry // nil when the path is gone (or no longer indexable)
	// chunks are the new chunks, valid when reindex is set.
	chunks []*chunk
	// reindex is set when the old chunks must be replaced by chunks; when
	// false only the file's size and mtime changed (or nothing did).
	reindex bool
	// data is the content, kept instead of chunks by a view of a shared
	// index when a sibling worktree already holds the same content.
	data string
	// blob is git's object id of the content read, set by a view; unread
	// is set instead when the view did not read the file: git's index
	// vouched for it, and a sibling had read the same blob.
	blob   *[20]byte
	unread bool
	// prev, in a shared content index's update, are the chunk ids of the
	// content the path held before in the view: a new chunk equal to one
	// of them takes its terms (see reusedTerms).
	prev []uint32
	// terms, in a shared content index's update staged during a
	// checkout (see staged), are the terms of chunks analysed then, by
	// index; nil for a chunk not analysed (one equal to a section its
	// path held, see sameChunks).
	terms [][]termIDCount
}

// readUpdate brings one path up to date. old is the current entry (nil if
// none). With force false a file whose size and mtime equal old's is not
// read; with force true it is read and its hash compared. Files over the
// size cap and files that are not UTF-8 are recorded as skipped (so that
// they are not read again until they change) and logged, and so are files
// whose links lead outside the project (see readOutside). The file read is
// the link's resolved target, the one the policy checked, read through the
// folder that admitted it.
func (ix *Index) readUpdate(rel string, old *fileEntry, force bool) fileUpdate {
	return ix.readUpdateIn(nil, rel, old, force)
}

// readUpdateIn is readUpdate that reads a regular file inside the project
// root through dirs' opened folders (see dirRoots); dirs may be nil.
func (ix *Index) readUpdateIn(dirs *dirRoots, rel string, old *fileEntry, force bool) fileUpdate {
	u := fileUpdate{rel: rel}
	if !ix.opts.indexable(rel) {
		u.reindex = old != nil
		return u
	}
	if fi, read, ok := dirs.regular(rel); ok {
		ix.outside.drop(rel)
		return ix.readContent(u, old, force, fi, read)
	}
	abs := filepath.Join(ix.opts.Root, filepath.FromSlash(rel))
	real, outside := ix.resolve(abs)
	if outside != nil {
		return ix.readOutside(u, abs, old, outside)
	}
	ix.outside.drop(rel)
	src := source{links: ix.opts.Links, abs: abs, real: real}
	fi, err := src.stat()
	if err != nil || !fi.Mode().IsRegular() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			ix.log.Warn("search: cannot stat file; dropping it from the index", "path", rel, "err", err)
		}
		u.reindex = old != nil
		return u
	}
	return ix.readContent(u, old, force, fi, src.read)
}

// readContent is readUpdate's end for a regular file whose info is fi and
// whose bytes read returns.
func (ix *Index) readContent(u fileUpdate, old *fileEntry, force bool, fi fs.FileInfo, read func() ([]byte, error)) fileUpdate {
	rel := u.rel
	e := &fileEntry{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	u.entry = e
	if !force && old != nil && old.size == e.size && old.mtime == e.mtime {
		*e = *old
		return u
	}
	if e.size > ix.opts.MaxFileSize {
		e.skip = fmt.Sprintf("larger than %d bytes", ix.opts.MaxFileSize)
		u.reindex = old == nil || old.skip != e.skip || len(old.chunks) > 0
		if u.reindex {
			ix.log.Warn("search: file too large; not indexed", "path", rel, "size", e.size, "max", ix.opts.MaxFileSize)
		}
		return u
	}
	data, err := read()
	ix.filesRead.Add(1)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			u.entry = nil
			u.reindex = old != nil
			return u
		}
		e.skip = "unreadable: " + err.Error()
		ix.log.Warn("search: cannot read file; not indexed", "path", rel, "err", err)
		u.reindex = true
		return u
	}
	sum := sha256.Sum256(data)
	copy(e.hash[:], sum[:])
	e.size = int64(len(data))
	if ix.opts.Shared != nil {
		id := blobID(data)
		u.blob = &id
	}
	if old != nil && old.hash == e.hash && old.skip == "" {
		e.chunks = old.chunks
		return u // touched, not changed
	}
	u.reindex = true
	if sh := ix.opts.Shared; sh != nil && sh.known(rel, e.hash) {
		u.data = string(data) // indexed already: chunked only if dropped meanwhile
		return u
	}
	if !utf8.Valid(data) {
		e.skip = "not valid UTF-8"
		ix.log.Warn("search: file is not UTF-8; not indexed", "path", rel)
		return u
	}
	u.chunks, err = buildChunks(rel, string(data))
	if err != nil {
		e.skip = err.Error()
		ix.log.Warn("search: file not indexed", "path", rel, "reason", e.skip)
	}
	return u
}

// buildChunks chunks one file's content. It refuses a file whose sections
// would store more than maxExpansion of its size.
func buildChunks(rel, content string) ([]*chunk, error) {
	doc := chunkMarkdown(content)
	title := cutUTF8(doc.Meta["title"], maxHeadingBytes)
	lb := fileLabels(rel, doc.RawMeta)
	stored := doc.Stored + len(doc.Sections)*chunkCost(rel, "", nil, title, lb.tags)
	if limit := maxExpansion(len(content)); doc.Over || stored > limit {
		return nil, fmt.Errorf("its sections would store more than %d bytes for a file of %d (a heading path or tags repeated over many small sections): split the file, or shorten its headings and tags", limit, len(content))
	}
	out := make([]*chunk, 0, len(doc.Sections))
	for _, s := range doc.Sections {
		out = append(out, &chunk{
			file:      rel,
			heading:   s.Heading,
			start:     s.StartLine,
			end:       s.EndLine,
			text:      s.Text,
			tokens:    uint32(estimateTokens(s.Text)),
			bodyStart: s.BodyStart,
			title:     title,
			tags:      lb.tags,
			phase:     lb.phase,
		})
	}
	return out, nil
}
