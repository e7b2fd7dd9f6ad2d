package search

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// gitEntry is what git's index records of one file of the worktree: the
// stat data git saw when it last wrote or checked the file, and the id of
// the blob its content was then.
type gitEntry struct {
	ctimeS, ctimeNs uint32
	mtimeS, mtimeNs uint32
	ino, size       uint32
	blob            [sha1.Size]byte
}

// gitIndex is a worktree's git index (<gitdir>/index), read for the files
// a view needs.
type gitIndex struct {
	entries map[string]gitEntry // path (slash-separated) -> its entry
	written int64               // the index file's mtime, Unix nanoseconds
}

// maxGitIndex bounds the index file read: past it, files are read.
const maxGitIndex = 64 << 20

// errGitIndex is an index that cannot be used: files are read instead.
var errGitIndex = errors.New("git index not usable")

// readGitIndex reads the git index of gitDir, keeping the entries whose
// path want accepts. A repository whose object ids are not SHA-1, an index
// that fails its checksum, or one larger than maxGitIndex gives an error:
// the caller then reads every file.
func readGitIndex(gitDir string, want func(rel string) bool) (*gitIndex, error) {
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxGitIndex {
		return nil, fmt.Errorf("%w: %s is no regular file of at most %d bytes", errGitIndex, f.Name(), maxGitIndex)
	}
	// Read at its size, in one allocation (a file that grew since is
	// read whole all the same, and fails its checksum if written partly).
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxGitIndex+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	entries, err := parseGitIndex(data, want)
	if err != nil {
		return nil, err
	}
	return &gitIndex{entries: entries, written: fi.ModTime().UnixNano()}, nil
}

// parseGitIndex decodes an index file of format 2, 3 or 4 (SHA-1 object
// ids), checked against its trailing checksum. Entries of a merge stage,
// skipped in the worktree or only intended to be added are left out, and
// so are links and submodules.
func parseGitIndex(data []byte, want func(rel string) bool) (map[string]gitEntry, error) {
	const header, trailer = 12, sha1.Size
	if len(data) < header+trailer || string(data[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: no index header", errGitIndex)
	}
	body := data[:len(data)-trailer]
	if sum := sha1.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, fmt.Errorf("%w: checksum mismatch (not SHA-1, or written partly)", errGitIndex)
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: format %d", errGitIndex, version)
	}
	count := binary.BigEndian.Uint32(data[8:12])
	// The smallest entry is 62 bytes with its name's terminator.
	if uint64(count) > uint64(len(body))/62 {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errGitIndex, count, len(body))
	}
	out := make(map[string]gitEntry, count) // sized once: count is bounded above
	var name []byte
	p := body[header:]
	for range count {
		const fixed = 62 // stat data, object id and flags
		if len(p) < fixed {
			return nil, fmt.Errorf("%w: entry cut short", errGitIndex)
		}
		start := len(p)
		var e gitEntry
		e.ctimeS, e.ctimeNs = binary.BigEndian.Uint32(p[0:]), binary.BigEndian.Uint32(p[4:])
		e.mtimeS, e.mtimeNs = binary.BigEndian.Uint32(p[8:]), binary.BigEndian.Uint32(p[12:])
		e.ino = binary.BigEndian.Uint32(p[20:])
		mode := binary.BigEndian.Uint32(p[24:])
		e.size = binary.BigEndian.Uint32(p[36:])
		copy(e.blob[:], p[40:60])
		flags := binary.BigEndian.Uint16(p[60:])
		p = p[fixed:]
		usable := flags&0x3000 == 0 && mode&0o170000 == 0o100000
		if flags&0x4000 != 0 { // extended flags: skip-worktree, intent-to-add
			if version < 3 || len(p) < 2 {
				return nil, fmt.Errorf("%w: extended flags", errGitIndex)
			}
			usable = usable && binary.BigEndian.Uint16(p)&0x6000 == 0
			p = p[2:]
		}
		if version == 4 {
			drop, n := binary.Uvarint(p)
			if n <= 0 || drop > uint64(len(name)) {
				return nil, fmt.Errorf("%w: path prefix", errGitIndex)
			}
			p = p[n:]
			name = name[:uint64(len(name))-drop]
		} else {
			name = name[:0]
		}
		end := bytes.IndexByte(p, 0)
		if end < 0 {
			return nil, fmt.Errorf("%w: unterminated path", errGitIndex)
		}
		name = append(name, p[:end]...)
		p = p[end+1:]
		if version < 4 {
			// Entries are padded with NULs to a multiple of 8 bytes.
			if pad := (start - len(p)) % 8; pad != 0 {
				if len(p) < 8-pad {
					return nil, fmt.Errorf("%w: entry padding", errGitIndex)
				}
				p = p[8-pad:]
			}
		}
		if usable && want(string(name)) {
			out[string(name)] = e
		}
	}
	return out, nil
}

// unchanged reports whether git's entry for rel vouches for the file as a
// walk found it: the same size, modification and change times and inode,
// and a modification older than the index itself (a file changed in the
// same tick as git wrote the index may differ from its entry: git calls it
// racily clean and reads it too).
func (gi *gitIndex) unchanged(rel string, df diskFile) (gitEntry, bool) {
	e, ok := gi.entries[rel]
	if !ok || df.skip != "" || df.ino == 0 || df.mtime >= gi.written {
		return gitEntry{}, false
	}
	return e, e.size == uint32(df.size) && e.ino == uint32(df.ino) &&
		e.mtimeS == uint32(df.mtime/1e9) && e.mtimeNs == uint32(df.mtime%1e9) &&
		e.ctimeS == uint32(df.ctime/1e9) && e.ctimeNs == uint32(df.ctime%1e9)
}

// blobID is git's object id of a file of content data.
func blobID(data []byte) [sha1.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	var id [sha1.Size]byte
	h.Sum(id[:0])
	return id
}
