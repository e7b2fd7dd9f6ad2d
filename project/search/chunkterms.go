package search

import (
	"path"
	"strings"
)

// maxTF caps a body term frequency; maxHeadTF the weighted count of a term
// in the heading field.
const (
	maxTF     = 1<<16 - 1
	maxHeadTF = 1<<8 - 1
)

// termCount is one term of a chunk: its frequency in the body and its
// weighted count in the heading field (own heading, enclosing headings,
// the file's title; see [ranking]).
type termCount struct {
	term string
	body uint16
	head uint8
}

// termIDCount is a termCount whose term is interned: its id in the
// index's dictionary.
type termIDCount struct {
	tid  uint32
	body uint16
	head uint8
}

// internTerms returns tcs with each term interned in ix's dictionary. The
// caller holds writeMu.
func (ix *Index) internTerms(tcs []termCount) []termIDCount {
	out := make([]termIDCount, len(tcs))
	for i, tc := range tcs {
		out[i] = termIDCount{tid: ix.dict.intern(tc.term), body: tc.body, head: tc.head}
	}
	return out
}

// fieldCounts is the per-term scratch of chunkTerms.
type fieldCounts struct{ body, head uint32 }

// chunkTerms returns the distinct terms of c, in no particular order, with
// their field counts, and the lengths of c's body and heading fields.
// counts is scratch space.
func (a *analyzer) chunkTerms(c *chunk, rk *ranking, counts map[string]fieldCounts) (out []termCount, bodyLen, headLen uint32) {
	clear(counts)
	head := func(weight uint8) func(string) {
		return func(t string) {
			fc := counts[t]
			fc.head += uint32(weight)
			counts[t] = fc
			headLen += uint32(weight)
		}
	}
	for i, h := range c.heading {
		w := rk.anc
		if i == len(c.heading)-1 {
			w = rk.own
		}
		if w > 0 {
			a.terms(h, head(w))
		}
	}
	if rk.title > 0 {
		a.terms(c.fileTitle(), head(rk.title))
	}
	a.terms(c.text[c.bodyStart:], func(t string) {
		fc := counts[t]
		fc.body++
		counts[t] = fc
		bodyLen++
	})
	out = make([]termCount, 0, len(counts))
	for t, fc := range counts {
		out = append(out, termCount{term: t, body: uint16(min(fc.body, maxTF)), head: uint8(min(fc.head, maxHeadTF))})
	}
	return out, bodyLen, headLen
}

// fileTitle is the title of c's file: its front matter title, else its file
// name without the extension, with '-' and '_' read as spaces.
func (c *chunk) fileTitle() string {
	if c.title != "" {
		return c.title
	}
	base := path.Base(c.file)
	base = strings.TrimSuffix(base, path.Ext(base))
	return strings.NewReplacer("-", " ", "_", " ").Replace(base)
}
