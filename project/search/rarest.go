package search

import (
	"strings"
	"sync"
)

// variant is an index term and the number of sections holding it.
type variant struct {
	t  string
	df int
}

// before orders variants rarest first, then by term.
func (v variant) before(o variant) bool { return v.df < o.df || v.df == o.df && v.t < o.t }

// rarestKeep is how many of a prefix's rarest terms a rareCache keeps: the
// variants a query takes plus room for the query's own terms among them.
const rarestKeep = 8

// rareCacheMax bounds the prefixes one snapshot remembers.
const rareCacheMax = 4096

// rareCache remembers, for one snapshot, the rarest terms sharing each
// prefix a query asked about. A query word whose first bytes hundreds of
// the project's terms share is then not checked against all of them at
// every search. It is exact: a snapshot's document counts never change,
// and a snapshot that changes postings gets a cache of its own.
type rareCache struct {
	mu sync.Mutex
	m  map[rareKey]rareList
	// names remembers, by query term, the dotted names whose first
	// piece it is (see dottedNames), within rareCacheMax terms too.
	names map[string][]string
}

type rareKey struct {
	n      int    // the bytes a variant shares with the query's word
	prefix string // the dictionary range scanned: term[:max(n, prefixLen)]
}

// rareList is a prefix's rarest terms, rarest first; whole says it holds
// every term of the prefix that occurs anywhere.
type rareList struct {
	terms []variant
	whole bool
}

func newRareCache() *rareCache {
	return &rareCache{m: map[rareKey]rareList{}, names: map[string][]string{}}
}

// remembered returns what m, one of c's maps, holds for k.
func remembered[K comparable, V any](c *rareCache, m map[K]V, k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// remember puts v for k in m, one of c's maps, while it holds fewer than
// rareCacheMax entries.
func remember[K comparable, V any](c *rareCache, m map[K]V, k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(m) < rareCacheMax {
		m[k] = v
	}
}

// dottedNames returns the terms of snapshot s that some section holds and
// that are t followed by a dot and more (resolv.conf for resolv), in id
// order, remembered per snapshot as rarestSharing's lists are.
func (ix *Index) dottedNames(s *snapshot, t string) []string {
	c := s.rare
	if c != nil {
		if l, ok := remembered(c, c.names, t); ok {
			return l
		}
	}
	var l []string
	ix.dict.sharingPrefix(t+".", len(t)+1, func(id uint32, name string) {
		if s.docFreq(id) != 0 {
			l = append(l, name)
		}
	})
	if c != nil {
		remember(c, c.names, strings.Clone(t), l)
	}
	return l
}

// rarestSharing returns the rarest terms of snapshot s sharing term's first
// n bytes (term itself included), at most keep of them, rarest first, and
// whether that is all of them.
func (ix *Index) rarestSharing(s *snapshot, term string, n, keep int) rareList {
	if len(term) < max(n, prefixLen) {
		return rareList{whole: true}
	}
	key := rareKey{n, term[:max(n, prefixLen)]}
	if c := s.rare; c != nil && keep <= rarestKeep {
		if l, ok := remembered(c, c.m, key); ok {
			return l
		}
		keep = rarestKeep
	}
	l := rareList{whole: true}
	ix.dict.sharingPrefix(term, n, func(id uint32, t string) {
		df := s.docFreq(id)
		if df == 0 {
			return
		}
		v := variant{t, df}
		k := len(l.terms)
		for k > 0 && v.before(l.terms[k-1]) {
			k--
		}
		if k == keep {
			l.whole = false
			return
		}
		if len(l.terms) == keep {
			l.terms = l.terms[:keep-1]
			l.whole = false
		}
		l.terms = append(l.terms, variant{})
		copy(l.terms[k+1:], l.terms[k:])
		l.terms[k] = v
	})
	if c := s.rare; c != nil && keep == rarestKeep {
		remember(c, c.m, key, l)
	}
	return l
}
