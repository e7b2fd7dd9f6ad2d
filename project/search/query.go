package search

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Query limits.
const (
	DefaultResults = 5
	MaxResults     = 50
	maxQueryBytes  = 2000
)

// ErrEmptyQuery is returned for a query with no text.
var ErrEmptyQuery = errors.New("query is empty: give the words to search for")

// Query is one search.
type Query struct {
	// Text holds words to rank by, and "double-quoted phrases" that a
	// result must contain word for word (stop words inside are ignored).
	Text string
	// N is the number of results wanted, 1..50; 0 means DefaultResults.
	N int
	// PathPrefix keeps only files whose path relative to the root starts
	// with it (for example ".praxis-os/standards/testing").
	PathPrefix string
	// Phase, when not nil, keeps only files of that workflow phase (front
	// matter "phase", or a workflow's phases/<N>/ folder).
	Phase *int
	// Tags keeps only files whose front matter lists every one of them
	// (compared without case).
	Tags []string
}

// plan is a query analyzed against the index's analyzer.
type plan struct {
	terms    []string   // distinct index terms, sorted
	required []bool     // per term: every result must contain it (phrase words)
	weights  []float32  // per term: its weight in the score; nil means 1 each
	joined   []string   // adjacent query words written as one identifier ("fill struct" -> "fillstruct")
	need     int        // number of required terms
	phrases  [][]string // term streams that must occur contiguously
	n        int
	prefix   string
	phase    int      // -1: any
	tags     []string // lowercased
}

var queryAnalyzers = sync.Pool{New: func() any { return newAnalyzer() }}

// compile validates q and analyzes its text.
func compile(q Query) (*plan, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return nil, ErrEmptyQuery
	}
	if len(text) > maxQueryBytes {
		return nil, fmt.Errorf("query is %d bytes long; keep it under %d", len(text), maxQueryBytes)
	}
	p := &plan{n: q.N, phase: -1}
	if p.n == 0 {
		p.n = DefaultResults
	}
	if p.n < 1 || p.n > MaxResults {
		return nil, fmt.Errorf("n_results must be between 1 and %d (got %d)", MaxResults, q.N)
	}
	if q.PathPrefix != "" {
		pre := strings.TrimPrefix(filepath2slash(q.PathPrefix), "./")
		if path.IsAbs(pre) || pre == ".." || strings.HasPrefix(pre, "../") || strings.Contains(pre, "/../") {
			return nil, fmt.Errorf("path_prefix %q must be a path relative to the project root", q.PathPrefix)
		}
		p.prefix = pre
	}
	if q.Phase != nil {
		if *q.Phase < 0 {
			return nil, fmt.Errorf("filter_phase must be a phase number, 0 or more (got %d)", *q.Phase)
		}
		p.phase = *q.Phase
	}
	for _, t := range q.Tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			return nil, errors.New("filter_tags holds an empty tag: give tag names, or leave filter_tags out")
		}
		p.tags = append(p.tags, t)
	}
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	all := map[string]bool{} // term -> required
	parts := strings.Split(text, `"`)
	for i, part := range parts {
		// Odd parts are quoted, unless the last quote is unbalanced.
		quoted := i%2 == 1 && i < len(parts)-1
		an.terms(part, func(t string) {
			if !all[t] {
				all[t] = false
			}
		})
		if !quoted {
			p.joined = append(p.joined, joinedPairs(an, part)...)
			continue
		}
		var stream []string
		an.stream(part, func(t string) { stream = append(stream, t) })
		for _, t := range stream {
			all[t] = true
		}
		if len(stream) > 1 {
			p.phrases = append(p.phrases, stream)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("query %q has no searchable words (only stop words or punctuation)", text)
	}
	for t := range all {
		p.terms = append(p.terms, t)
	}
	slices.Sort(p.terms)
	p.required = make([]bool, len(p.terms))
	for i, t := range p.terms {
		if all[t] {
			p.required[i] = true
			p.need++
		}
	}
	return p, nil
}

// joinedPairs returns each pair of adjacent words of text, lowercased and
// written together: the compound term an identifier such as fillStruct or
// directory_filters is indexed under.
func joinedPairs(an *analyzer, text string) []string {
	var out []string
	prev := ""
	tokenize(text, func(start, end int) {
		w := an.lowerString(text[start:end])
		if prev != "" && len(prev)+len(w) <= maxTermLen {
			out = append(out, prev+w)
		}
		prev = w
	})
	return out
}

// weight is the score weight of term i.
func (p *plan) weight(i int) float32 {
	if p.weights == nil {
		return 1
	}
	return p.weights[i]
}

// filepath2slash normalizes separators without touching the meaning of the
// path (no cleaning: "std/" must keep matching only below "std").
func filepath2slash(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// containsPhrase reports whether the term stream of text holds phrase as a
// contiguous run.
func containsPhrase(an *analyzer, text string, phrase []string) bool {
	found := false
	matched := 0
	an.stream(text, func(t string) {
		if found {
			return
		}
		for {
			if t == phrase[matched] {
				matched++
				if matched == len(phrase) {
					found = true
				}
				return
			}
			if matched == 0 {
				return
			}
			// Restart: the longest proper prefix of the phrase that ends
			// here is found by retrying from the next start.
			matched = restart(phrase, matched)
		}
	})
	return found
}

// restart returns the length of the longest proper border of phrase[:m]
// (the KMP failure function, computed directly; phrases are short).
func restart(phrase []string, m int) int {
	for k := m - 1; k > 0; k-- {
		if slices.Equal(phrase[:k], phrase[m-k:m]) {
			return k
		}
	}
	return 0
}
