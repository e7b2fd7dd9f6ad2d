package search

import (
	"fmt"
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

// TestTermDictLookupCached checks that the lookup searches use, which
// remembers the base terms it found, answers as lookup does: before and
// after a term is remembered, for added and missing terms, once a term
// missing is added, and across the forgetting of a full memory, while
// another goroutine adds terms.
func TestTermDictLookupCached(t *testing.T) {
	var base baseTerms
	base.off = []uint32{0}
	n := foundMax + 100
	for i := range n {
		base.all += fmt.Sprintf("t%05d", i)
		base.off = append(base.off, uint32(len(base.all)))
	}
	d := newTermDictOver(base)
	if id := d.intern("zz-added"); id != uint32(n) {
		t.Fatalf("intern(zz-added) = %d, want %d", id, n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			d.intern(fmt.Sprintf("zz%04d", i))
		}
	}()
	for round := range 2 {
		for i := range n { // more than foundMax: the memory fills and is forgotten
			term := fmt.Sprintf("t%05d", i)
			if id, ok := d.lookupCached(term); !ok || id != uint32(i) {
				t.Fatalf("round %d: lookupCached(%q) = %d, %v; want %d", round, term, id, ok, i)
			}
		}
		if id, ok := d.lookupCached("zz-added"); !ok || id != uint32(n) {
			t.Errorf("round %d: lookupCached(zz-added) = %d, %v; want %d", round, id, ok, n)
		}
		if id, ok := d.lookupCached("t"); ok {
			t.Errorf("round %d: lookupCached(t) = %d: not a term", round, id)
		}
	}
	<-done
	if _, ok := d.lookupCached("zz-late"); ok {
		t.Error("lookupCached(zz-late) found a term not added yet")
	}
	late := d.intern("zz-late")
	if id, ok := d.lookupCached("zz-late"); !ok || id != late {
		t.Errorf("lookupCached(zz-late) once added = %d, %v; want %d", id, ok, late)
	}
	if len(d.found) > foundMax {
		t.Errorf("%d terms remembered, more than %d", len(d.found), foundMax)
	}
	for i := range 1000 {
		term := fmt.Sprintf("zz%04d", i)
		want, _ := d.lookup(term)
		if id, ok := d.lookupCached(term); !ok || id != want {
			t.Errorf("lookupCached(%q) = %d, %v; want %d", term, id, ok, want)
		}
	}
}
