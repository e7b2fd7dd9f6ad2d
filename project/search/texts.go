package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/berth-dev/berth/store"
)

// A reopened index loads its sections' records but not their texts: only a
// search's answer (and its phrase checks) needs a text, and then only of a
// few sections. The texts are read from the texts bucket, a batch per short
// read transaction (a read transaction held open keeps the store file from
// growing), and each is checked against the length and CRC-32C its record
// keeps: freed section ids are reused, so the text stored under an id may be
// a newer section's than the one a search's snapshot holds.

// errTextMoved reports a stored text that is not the one a snapshot's
// section names: the section was replaced, or the index rewritten, since
// the search took its snapshot. The search runs again on the current one.
var errTextMoved = errors.New("section replaced since the search began")

// textBatch bounds the texts read in one read transaction.
const textBatch = 256

// eachText calls fn with the text of each of cs in turn, in order: a loaded
// one from memory, a stored one from the store. fn returning false stops
// the walk. A stored text that is not the one its section names is
// errTextMoved when s is no longer the current snapshot, and a
// [damagedText] when it is.
func (ix *Index) eachText(s *snapshot, cs []*chunk, fn func(i int, text string) bool) error {
	warm := ix.warm.Load()
	for lo := 0; lo < len(cs); lo += textBatch {
		batch := cs[lo:min(lo+textBatch, len(cs))]
		if !slices.ContainsFunc(batch, func(c *chunk) bool { return c.stored && !warm.has(c) }) {
			for i, c := range batch {
				text := c.text
				if c.stored {
					text, _ = warm.text(c)
				}
				if !fn(lo+i, text) {
					return nil
				}
			}
			continue
		}
		stop := false
		var failed *chunk
		err := ix.viewTexts(func(tb *store.Bucket) error {
			for i, c := range batch {
				text, ok := c.text, !c.stored
				if !ok {
					text, ok = warm.text(c)
				}
				if !ok {
					var err error
					if text, err = readText(tb, c); err != nil {
						failed = c
						return err
					}
				}
				if !fn(lo+i, text) {
					stop = true
					return nil
				}
			}
			return nil
		})
		if errors.Is(err, errTextMoved) && ix.isCurrent(s) {
			err = &damagedText{file: failed.file, err: fmt.Errorf("%w: not the text its section's record names", errCorrupt)}
		}
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// isCurrent reports whether s is the current snapshot once no commit is
// under way: a commit writes the store before it swaps its snapshot in, so
// that until then the store may hold texts s does not know.
func (ix *Index) isCurrent(s *snapshot) bool {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.snap.Load() == s
}

// textsOf returns the texts of cs (see eachText).
func (ix *Index) textsOf(s *snapshot, cs []*chunk) ([]string, error) {
	out := make([]string, len(cs))
	err := ix.eachText(s, cs, func(i int, text string) bool {
		out[i] = text
		return true
	})
	return out, err
}

// viewTexts runs fn over the texts bucket in a read transaction.
func (ix *Index) viewTexts(fn func(tb *store.Bucket) error) error {
	if ix.area == nil {
		return fmt.Errorf("%w: a section's text is not in memory and the index has no store", errCorrupt)
	}
	return ix.area.View(func(b *store.Bucket) error { return fn(b.Bucket(bucketTexts)) })
}

// readText reads stored section c's text from the texts bucket tb.
func readText(tb *store.Bucket, c *chunk) (string, error) {
	v := tb.Get(chunkKey(c.textID))
	if len(v) != int(c.textN)+4 || binary.BigEndian.Uint32(v[len(v)-4:]) != c.textCRC {
		return "", fmt.Errorf("text of a section of %s: %w", c.file, errTextMoved)
	}
	d := open(v)
	if d.err != nil {
		return "", &damagedText{file: c.file, err: d.err}
	}
	return string(d.b), nil
}

// damagedText is a stored text of the current snapshot that does not pass
// its checksum or is not the one its section's record names.
type damagedText struct {
	file string
	err  error
}

func (e *damagedText) Error() string {
	return fmt.Sprintf("stored text of a section of %s: %v", e.file, e.err)
}
func (e *damagedText) Unwrap() error { return e.err }

// mend indexes the file of a damaged stored text again, from the file on
// disk, which rewrites its sections' texts.
func (ix *Index) mend(ctx context.Context, dt *damagedText) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.log.Warn("search: a section's stored text is damaged; indexing its file again", "path", dt.file, "err", dt.err)
	// As if the index had never seen the file: it is read and its
	// sections replaced, even when its content is unchanged.
	if err := ix.commit([]fileUpdate{ix.readUpdate(dt.file, nil, false)}); err != nil {
		return fmt.Errorf("mend %s: %w", dt.file, err)
	}
	return nil
}

// withTexts returns cs with every stored section replaced by a copy holding
// its text, for the writer, which analyzes sections again and writes them
// under new ids, and for the embedder; read[i] is false for a section whose
// text cannot be read (replaced since, or damaged), left as it was.
func (ix *Index) withTexts(cs []*chunk) (out []*chunk, read []bool) {
	out, read = slices.Clone(cs), make([]bool, len(cs))
	var want []int
	for i, c := range cs {
		read[i] = !c.stored
		if c.stored {
			want = append(want, i)
		}
	}
	for lo := 0; lo < len(want); lo += textBatch {
		batch := want[lo:min(lo+textBatch, len(want))]
		ix.viewTexts(func(tb *store.Bucket) error {
			for _, i := range batch {
				if text, err := readText(tb, cs[i]); err == nil {
					cp := *cs[i]
					cp.text, cp.stored = text, false
					out[i], read[i] = &cp, true
				}
			}
			return nil
		})
	}
	return out, read
}

// warnUnread logs the sections of cs whose text withTexts could not read;
// the caller holds writeMu, so they are damaged, not replaced.
func (ix *Index) warnUnread(cs []*chunk, read []bool) {
	for i, ok := range read {
		if !ok {
			ix.log.Warn("search: a section's stored text is damaged; indexing its file again", "path", cs[i].file)
		}
	}
}
