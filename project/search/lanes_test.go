package search

import (
	"slices"
	"testing"
)

// TestPlainLane checks that the plain BM25 lane is mixed in by its weight:
// with the heading field weighted 0, the main lane ranks only the section
// whose body holds the word; the plain lane, which counts the heading's
// words like the body's, ranks the section headed by it first.
func TestPlainLane(t *testing.T) {
	root, db := standardsDB(t, map[string]string{
		".praxis-os/standards/a.md": "# Retry\n\nUse timeouts.\n",
		".praxis-os/standards/b.md": "# Timeouts\n\nEvery outbound call carries a deadline; a call that fails may retry once, after the deadline of the first has passed and the server has answered.\n",
	})
	for _, tc := range []struct {
		plain float32
		first string
	}{
		{0, ".praxis-os/standards/b.md"},
		{1, ".praxis-os/standards/a.md"},
	} {
		rk := defaultRanking
		rk.headWeight, rk.filePrior, rk.variantWeight = 0, 0, 0
		rk.plainWeight = tc.plain
		ix := openWith(t, Options{Root: root, Sources: defaultSources, DB: db, ProjectID: "lane", ranking: &rk})
		got := files(search(t, ix, "retry"))
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("plain lane %g: ranked %v, want %s first", tc.plain, got, tc.first)
		}
		ix.Close()
	}
}

// TestMixLanes checks the mix: each lane divided by its best, weighed.
func TestMixLanes(t *testing.T) {
	cands := []candidate{{id: 0, score: 4}, {id: 1, score: 2}, {id: 2, score: 1}}
	plain := []float32{1, 2, 0}
	mixLanes(cands, plain, 0.25)
	got := []float32{cands[0].score, cands[1].score, cands[2].score}
	want := []float32{0.75*1 + 0.25*0.5, 0.75*0.5 + 0.25*1, 0.75 * 0.25}
	if !slices.Equal(got, want) {
		t.Errorf("mixed %v, want %v", got, want)
	}
	none := []candidate{{id: 0, score: 3}}
	mixLanes(none, []float32{0}, 0.5)
	if none[0].score != 3 {
		t.Errorf("a plain lane that matched nothing changed the score to %v", none[0].score)
	}
}
