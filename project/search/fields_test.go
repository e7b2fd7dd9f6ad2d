package search

import (
	"testing"
)

// TestFieldsRanksByWeightedFields: a word in a heavier field ranks its
// document first; identifiers match by their parts; related words find
// a document that does not hold the query's own word, below one that
// does; an empty query is refused.
func TestFieldsRanksByWeightedFields(t *testing.T) {
	specs := []FieldSpec{{Weight: 3, B: 0.5}, {Weight: 1, B: 0.75}}
	docs := [][]string{
		{"read_graph", "Read the entire knowledge graph"},
		{"delete_entities", "Delete entities and their relations from the graph"},
		{"list_directory", "List the files of a folder: delete nothing"},
	}
	fx := NewFields(specs, docs, FieldsOptions{Related: [][]string{{"delete", "forget"}}, RelatedWeight: 0.5})
	top := func(q string) []int {
		t.Helper()
		hits, err := fx.Search(q, 3)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, h := range hits {
			out = append(out, h.Doc)
		}
		return out
	}
	if got := top("delete"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("delete: %v, want the name's match (1) before the description's (2)", got)
	}
	if got := top("graph reading"); len(got) == 0 || got[0] != 0 {
		t.Errorf("graph reading: %v, want read_graph first", got)
	}
	if got := top("forget entities"); len(got) == 0 || got[0] != 1 {
		t.Errorf("forget entities: %v, want delete_entities first (related word)", got)
	}
	if got := top("forget"); len(got) != 2 || got[0] != 1 {
		t.Errorf("forget: %v, want the related word's matches, the name's first", got)
	}
	if _, err := fx.Search("  ", 3); err == nil {
		t.Error("an empty query was taken")
	}
	if fx.Len() != 3 {
		t.Errorf("Len = %d", fx.Len())
	}
}
