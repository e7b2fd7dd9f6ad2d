package search

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
)

// termSet is a section's terms by term, for comparing them in any order.
func termSet(tcs []termCount) map[string]termCount {
	out := make(map[string]termCount, len(tcs))
	for _, tc := range tcs {
		out[tc.term] = tc
	}
	return out
}

// checkPostingsMatchTexts checks every section of ix's snapshot: its
// postings are what its text analyses to, and so are its lengths.
func checkPostingsMatchTexts(t *testing.T, ix *Index) {
	t.Helper()
	s := ix.snap.Load()
	held := make(map[uint32][]termCount)
	for tid := range uint32(ix.dict.size()) {
		if pl := s.postingsOf(tid); pl != nil {
			for i, id := range pl.ids {
				held[id] = append(held[id], termCount{term: ix.dict.term(tid), body: pl.tfs[i], head: pl.hts[i]})
			}
		}
	}
	an := newAnalyzer()
	checked := 0
	for id, c := range s.chunks {
		if c == nil {
			continue
		}
		want, bodyLen, headLen := an.chunkTerms(c, ix.rk, make(map[string]fieldCounts))
		if got := held[uint32(id)]; !maps.Equal(termSet(got), termSet(want)) {
			t.Fatalf("section %d of %s: postings hold %v, its text analyses to %v", id, c.file, got, want)
		}
		if c.bodyLen != bodyLen || c.headLen != headLen {
			t.Fatalf("section %d of %s: lengths %d/%d, its text's %d/%d", id, c.file, c.bodyLen, c.headLen, bodyLen, headLen)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no section checked")
	}
}

// TestSwitchReusesTheTermsOfUnchangedSections: a branch switch that
// changes one section of every file takes the terms of each other section
// from the postings of the one its file held before, rather than
// analysing its text again; the index is then what analysing every text
// gives.
func TestSwitchReusesTheTermsOfUnchangedSections(t *testing.T) {
	const n = 2 * reuseFrom
	db, sh := openDB(t), NewShared(nil)
	base := t.TempDir()
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	writeFiles(t, main, worktreeFiles(n, "trunk"))
	writeFiles(t, wt, worktreeFiles(n, "trunk"))
	openView(t, db, sh, "main", main)
	v := openView(t, db, sh, "wt", wt)
	next := worktreeFiles(n, "topic") // each file's "Details" section as on trunk
	writeFiles(t, wt, next)
	paths := slices.Sorted(maps.Keys(next))

	v.writeMu.Lock()
	var ups []fileUpdate
	for _, u := range v.readUpdates(paths, true) {
		ups = append(ups, sh.contentUpdate(contentKey(u.rel, u.entry.hash), u, v.w.files[u.rel]))
	}
	core := sh.core
	core.writeMu.Lock()
	reused := core.reusedTerms(ups, core.snap.Load())
	core.writeMu.Unlock()
	v.writeMu.Unlock()
	if len(reused) != n {
		t.Fatalf("%d sections take their terms from the postings, want %d (each file's unchanged one)", len(reused), n)
	}
	an := newAnalyzer()
	for c, tcs := range reused {
		bodyLen, headLen := c.bodyLen, c.headLen
		want, wantBody, wantHead := an.chunkTerms(c, core.rk, make(map[string]fieldCounts))
		if !maps.Equal(termSet(tcs), termSet(want)) || bodyLen != wantBody || headLen != wantHead {
			t.Fatalf("%s %v: terms %v (lengths %d/%d), its text analyses to %v (%d/%d)", c.file, c.heading, tcs, bodyLen, headLen, want, wantBody, wantHead)
		}
	}

	if err := v.Apply(context.Background(), paths); err != nil {
		t.Fatal(err)
	}
	if res := search(t, v, "marker section"); res.Total != n || !branchesIn(res, "topic")["topic"] {
		t.Fatalf("after the switch: %d sections, naming %v", res.Total, branchesIn(res, "trunk", "topic"))
	}
	checkPostingsMatchTexts(t, core)
}
