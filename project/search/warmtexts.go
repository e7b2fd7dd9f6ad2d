package search

import (
	"context"
	"time"

	"github.com/berth-dev/berth/store"
)

// A reopened index answers as soon as its sections' records are loaded
// (texts.go); its texts are then read into memory behind it, so that its
// searches cost what a built index's cost: a phrase check or a snippet
// reads a string instead of the store. Until they are all in, and for a
// text that could not be read then, a search reads the store as before.
// They cost the memory a built index's texts cost; a text whose section is
// replaced later stays until the index is closed.

// warmTexts are the texts of the sections a reopen loaded, by text id. A
// text serves a section only when its length and CRC-32C are the ones the
// section's record names (ids are reused), as readText checks the store's.
type warmTexts struct {
	texts []string
	sums  []uint32
}

// text returns c's text when w holds it.
func (w *warmTexts) text(c *chunk) (string, bool) {
	if w == nil || int(c.textID) >= len(w.texts) {
		return "", false
	}
	t := w.texts[c.textID]
	if len(t) != int(c.textN) || w.sums[c.textID] != c.textCRC {
		return "", false
	}
	return t, true
}

// loadTexts reads the texts of the stored sections of the current
// snapshot, a batch per short read transaction, and makes them the ones
// searches read. It stops when ctx ends; a text that no longer matches its
// section (replaced since) is left to the store.
func (ix *Index) loadTexts(ctx context.Context) {
	if ix.area == nil {
		return
	}
	s := ix.snap.Load()
	var stored []*chunk
	maxID := uint32(0)
	for _, c := range s.chunks {
		if c != nil && c.stored {
			stored = append(stored, c)
			maxID = max(maxID, c.textID)
		}
	}
	if len(stored) == 0 {
		return
	}
	w := &warmTexts{texts: make([]string, maxID+1), sums: make([]uint32, maxID+1)}
	start := time.Now()
	loaded := 0
	for lo := 0; lo < len(stored); lo += textBatch {
		if ctx.Err() != nil {
			return
		}
		batch := stored[lo:min(lo+textBatch, len(stored))]
		err := ix.viewTexts(func(tb *store.Bucket) error {
			for _, c := range batch {
				// A text replaced since, or damaged, is left to the store:
				// a search reading it there mends it (texts.go).
				if text, err := readText(tb, c); err == nil {
					w.texts[c.textID], w.sums[c.textID] = text, c.textCRC
					loaded++
				}
			}
			return nil
		})
		if err != nil {
			ix.log.Debug("search: reading the texts into memory stopped", "err", err)
			return
		}
	}
	ix.warm.Store(w)
	ix.log.Debug("search: texts read into memory", "sections", loaded, "took", time.Since(start).Round(time.Millisecond))
}

// has reports whether w holds c's text.
func (w *warmTexts) has(c *chunk) bool {
	_, ok := w.text(c)
	return ok
}
