package search

import (
	"slices"
	"testing"
)

// A morphological variant of a query word (a word of the index sharing its
// first six letters that the stemmer keeps apart: "deterministic" for
// "determine") lifts a section the query's own words matched, and brings in
// none of its own; the same holds once the index is reopened from the
// store, its postings still encoded.
func TestVariantsOnlyAddToMatchedSections(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".praxis-os/standards/a.md": "# Alpha\n\nThe order is fixed here.\n",
		".praxis-os/standards/b.md": "# Beta\n\nThe order is deterministic here.\n",
		".praxis-os/standards/c.md": "# Gamma\n\nThe output is deterministic.\n",
	})
	db := openDB(t)
	check := func(ix *Index) {
		t.Helper()
		got := files(search(t, ix, "determine the order"))
		if want := []string{".praxis-os/standards/b.md", ".praxis-os/standards/a.md"}; !slices.Equal(got, want) {
			t.Errorf("determine the order: %v, want %v (the variant lifts b.md, and brings in no c.md)", got, want)
		}
	}
	ix := openReady(t, db, "p", root)
	check(ix)
	ix.Close()
	check(openReady(t, db, "p", root))
}
