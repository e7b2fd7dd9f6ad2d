package search

import (
	"slices"
	"testing"
)

// TestSortPostings: postings in ascending, descending or any order come
// out in ascending order of id, each with its frequencies.
func TestSortPostings(t *testing.T) {
	ids := func(ps []posting) []uint32 {
		out := make([]uint32, len(ps))
		for i, p := range ps {
			out[i] = p.id
			if p.tf != uint16(p.id)+1 {
				t.Fatalf("posting %d has the frequency %d of another", p.id, p.tf)
			}
		}
		return out
	}
	for _, order := range [][]uint32{{1, 2, 5, 9}, {9, 5, 2, 1}, {5, 1, 9, 2}, {7}, nil} {
		ps := make([]posting, len(order))
		for i, id := range order {
			ps[i] = posting{id: id, tf: uint16(id) + 1}
		}
		sortPostings(ps)
		want := slices.Sorted(slices.Values(order))
		if got := ids(ps); !slices.Equal(got, want) {
			t.Errorf("%v sorted to %v, want %v", order, got, want)
		}
	}
}
