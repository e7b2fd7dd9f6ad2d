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

// TestFieldsTermScores: a query's score in Search is the sum of its
// terms' TermScores; a term no document holds calls nothing; RelatedTerms
// analyzes the groups as the fields are.
func TestFieldsTermScores(t *testing.T) {
	specs := []FieldSpec{{Weight: 3, B: 0.5}, {Weight: 1, B: 0.75}}
	docs := [][]string{
		{"read_graph", "Read the entire knowledge graph"},
		{"delete_entities", "Delete entities and their relations from the graph"},
		{"list_directory", "List the files of a folder: delete nothing"},
	}
	fx := NewFields(specs, docs, FieldsOptions{})
	sum := make([]float32, len(docs))
	for _, term := range Words("delete graph") {
		fx.TermScores(term, func(doc int, score float32) { sum[doc] += score })
	}
	hits, err := fx.Search("delete graph", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("delete graph: %v, want all three documents", hits)
	}
	for _, h := range hits {
		if d := h.Score - sum[h.Doc]; d > 1e-4 || d < -1e-4 {
			t.Errorf("document %d: Search scores %v, its terms' TermScores sum to %v", h.Doc, h.Score, sum[h.Doc])
		}
	}
	fx.TermScores("absent", func(doc int, _ float32) { t.Errorf("absent term called for document %d", doc) })
	rel := RelatedTerms([][]string{{"Deleting", "forget"}})
	if got := rel["delet"]; len(got) != 1 || got[0] != "forget" {
		t.Errorf("RelatedTerms: delet -> %v, want [forget]", got)
	}
}
