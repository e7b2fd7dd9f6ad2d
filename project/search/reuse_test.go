package search

import (
	"context"
	"maps"
	"slices"
	"strings"
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
// changes one section of every file, moving the next one a line down,
// takes the terms of that next section from the postings of the one its
// file held before, rather than analysing its text again; the index is
// then what analysing every text gives.
func TestSwitchReusesTheTermsOfUnchangedSections(t *testing.T) {
	const n = 2 * reuseFrom
	sh, _, v, _, wt := twinViews(t, n)
	// Each file's "Details" section as on trunk, a line further down: a
	// section of its own, with the same terms.
	next := worktreeFiles(n, "topic")
	for rel, text := range next {
		next[rel] = strings.Replace(text, "\n\n## Details", "\nA second line.\n\n## Details", 1)
	}
	writeFiles(t, wt, next)
	paths := slices.Sorted(maps.Keys(next))

	v.writeMu.Lock()
	var ups []fileUpdate
	for _, u := range v.readUpdates(paths, true) {
		ups = append(ups, sh.contentUpdate(contentKey(u.rel, u.entry.hash), u, v.w.files[u.rel]))
	}
	core := sh.core
	core.writeMu.Lock()
	if same := core.sameChunks(ups, core.snap.Load()); len(same) != 0 {
		t.Fatalf("%d sections kept as they are, want none: each moved", len(same))
	}
	reused := core.reusedTerms(ups, core.snap.Load(), func(*chunk) bool { return false })
	core.writeMu.Unlock()
	v.writeMu.Unlock()
	if len(reused) != n {
		t.Fatalf("%d sections take their terms from the postings, want %d (each file's unchanged one)", len(reused), n)
	}
	an := newAnalyzer()
	for c, ids := range reused {
		bodyLen, headLen := c.bodyLen, c.headLen
		want, wantBody, wantHead := an.chunkTerms(c, core.rk, make(map[string]fieldCounts))
		tcs := make([]termCount, len(ids))
		for i, tc := range ids {
			tcs[i] = termCount{term: core.dict.term(tc.tid), body: tc.body, head: tc.head}
		}
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

// TestSwitchKeepsTheSectionsItDoesNotChange: a branch switch that changes
// one section of every file, the others as they were at the same lines,
// indexes only the changed sections: the new content holds the others as
// they are, with the sibling's content that holds them too. Dropping
// either content keeps the sections the other holds, and the index is
// always what analysing every text gives.
func TestSwitchKeepsTheSectionsItDoesNotChange(t *testing.T) {
	const n = 2 * dropScanFrom // drops found by a pass over the postings
	sh, m, v, _, wt := twinViews(t, n)
	core := sh.core
	trunk := sh.Status().Chunks
	paths := slices.Sorted(maps.Keys(worktreeFiles(n, "trunk")))
	switchTo := func(branch string) {
		t.Helper()
		writeFiles(t, wt, worktreeFiles(n, branch))
		if err := v.Apply(context.Background(), paths); err != nil {
			t.Fatal(err)
		}
		if total, seen := markerBranches(t, v, "trunk", "topic"); total != n || len(seen) != 1 || !seen[branch] {
			t.Fatalf("after the switch to %s: %d sections naming %v", branch, total, seen)
		}
		if got := search(t, v, "retries backoff").Total; got != n {
			t.Fatalf("after the switch to %s: %d sections hold the unchanged section's words, want %d", branch, got, n)
		}
		checkPostingsMatchTexts(t, core)
	}
	// Each file's "Details" section is trunk's: topic adds its first
	// sections and its own file.
	switchTo("topic")
	if got, want := sh.Status().Chunks, trunk+n+1; got != want {
		t.Fatalf("%d sections indexed after the switch, want %d", got, want)
	}
	if total, seen := markerBranches(t, m, "trunk", "topic"); total != n || len(seen) != 1 || !seen["trunk"] {
		t.Fatalf("the sibling sees %d sections naming %v, want trunk's alone", total, seen)
	}
	switchTo("trunk")
	if got := sh.Status().Chunks; got != trunk {
		t.Fatalf("%d sections indexed after the switch back, want trunk's %d", got, trunk)
	}
	// With the sibling gone, trunk's content is dropped by the switch,
	// but not the sections topic holds as they are.
	m.Close()
	switchTo("topic")
	if got := sh.Status().Chunks; got != trunk {
		t.Fatalf("%d sections indexed, want topic's %d", got, trunk)
	}
	switchTo("trunk")
	if got := sh.Status().Chunks; got != trunk {
		t.Fatalf("%d sections indexed, want trunk's %d", got, trunk)
	}
}

// TestDroppedPostingsFoundInOnePass: the postings of many chunks dropped
// from a content index, found in one pass over its lists, are those their
// texts analyse to.
func TestDroppedPostingsFoundInOnePass(t *testing.T) {
	sh, _, _, _, _ := twinViews(t, dropScanFrom)
	core := sh.core
	s := core.snap.Load()
	var ids []uint32
	var gone []*chunk
	for id, c := range s.chunks {
		if c != nil && id%2 == 0 {
			ids, gone = append(ids, uint32(id)), append(gone, c)
		}
	}
	if len(ids) < dropScanFrom || s.stored != nil {
		t.Fatalf("%d chunks dropped (stored postings: %v): the pass is not taken", len(ids), s.stored != nil)
	}
	want := make(map[uint32][]uint32)
	an := newAnalyzer()
	for i, c := range gone {
		tcs, _, _ := an.chunkTerms(c, core.rk, make(map[string]fieldCounts))
		for _, tc := range tcs {
			tid := core.dict.intern(tc.term)
			want[tid] = append(want[tid], ids[i])
		}
	}
	core.writeMu.Lock()
	lists := core.droppedPostings(ids, gone, s)
	core.writeMu.Unlock()
	got := make(map[uint32][]uint32)
	for _, tid := range lists.touched {
		got[tid] = lists.get(tid)
	}
	for _, m := range []map[uint32][]uint32{want, got} {
		for _, l := range m {
			slices.Sort(l)
		}
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("the pass over the postings found %d terms' lists to change, the texts %d", len(got), len(want))
	}
}
