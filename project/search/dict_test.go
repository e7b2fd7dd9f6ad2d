package search

import (
	"slices"
	"testing"
)

// TestTermDictOverStoredTerms checks a dictionary whose first ids are the
// stored terms of a loaded index and whose later ids are added terms.
func TestTermDictOverStoredTerms(t *testing.T) {
	stored := []string{"apple", "applesauce", "apply", "banana"}
	var base baseTerms
	base.off = []uint32{0}
	for _, s := range stored {
		base.all += s
		base.off = append(base.off, uint32(len(base.all)))
	}
	d := newTermDictOver(base)
	for i, s := range stored {
		if id, ok := d.lookup(s); !ok || id != uint32(i) {
			t.Errorf("lookup(%q) = %d, %v; want %d", s, id, ok, i)
		}
		if got := d.term(uint32(i)); got != s {
			t.Errorf("term(%d) = %q, want %q", i, got, s)
		}
	}
	for _, s := range []string{"", "a", "appl", "applet", "cherry"} {
		if id, ok := d.lookup(s); ok {
			t.Errorf("lookup(%q) = %d: not a term", s, id)
		}
	}
	if id := d.intern("apple"); id != 0 {
		t.Errorf("intern(apple) = %d, want its stored id 0", id)
	}
	if id := d.intern("applet"); id != 4 {
		t.Errorf("intern(applet) = %d, want 4", id)
	}
	if id := d.intern("applet"); id != 4 || d.size() != 5 {
		t.Errorf("intern(applet) again = %d, size %d", id, d.size())
	}
	d.intern("cherry")
	var ids []uint32
	var terms []string
	d.sharingPrefix("applez", 5, func(id uint32, term string) { ids, terms = append(ids, id), append(terms, term) })
	if want := []string{"apple", "applesauce", "applet"}; !slices.Equal(terms, want) || !slices.IsSorted(ids) {
		t.Errorf("sharing apple: %v %v, want %v in id order", ids, terms, want)
	}
	terms = nil
	d.sharingPrefix("applesauce", 4, func(_ uint32, term string) { terms = append(terms, term) })
	if want := []string{"apple", "applesauce", "applet"}; !slices.Equal(terms, want) {
		t.Errorf("sharing apple's first 4 bytes: %v, want %v", terms, want)
	}
	terms = nil
	d.sharingPrefix("applesauces", 6, func(_ uint32, term string) { terms = append(terms, term) })
	if want := []string{"applesauce"}; !slices.Equal(terms, want) {
		t.Errorf("sharing applesauces' first 6 bytes: %v, want %v", terms, want)
	}
}
