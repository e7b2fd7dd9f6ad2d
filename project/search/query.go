package search

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Query limits. A query over one of them is refused with an error that
// names it (docs/security.md, "Search limits").
const (
	DefaultResults = 5
	MaxResults     = 50
	maxQueryBytes  = 2000
	// maxQueryTerms caps the distinct terms (stems and identifier parts)
	// of one query.
	maxQueryTerms = 64
	// maxPhrases caps the distinct quoted phrases of one query; a phrase
	// repeated is one phrase.
	maxPhrases = 8
	// maxFilterTags caps the distinct filter_tags: a file keeps at most
	// maxFileTags tags, so a filter with more can match nothing.
	maxFilterTags = maxFileTags
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
	// Queries are more phrasings of the same question, each ranked like
	// Text (which may be empty when Queries is not) and fused by
	// reciprocal rank; at most maxPhrasings in all.
	Queries []string
}

// maxPhrasings caps Text and Queries together.
const maxPhrasings = 5

// compileAll compiles every phrasing of q with q's filters.
func compileAll(q Query) ([]*plan, error) {
	texts := q.Queries
	if strings.TrimSpace(q.Text) != "" || len(q.Queries) == 0 {
		texts = append([]string{q.Text}, q.Queries...)
	}
	if len(texts) > maxPhrasings {
		return nil, fmt.Errorf("%d phrasings: send at most %d (query and queries together)", len(texts), maxPhrasings)
	}
	plans := make([]*plan, 0, len(texts))
	for i, t := range texts {
		one := q
		one.Text, one.Queries = t, nil
		p, err := compile(one)
		if err != nil {
			if len(texts) > 1 {
				return nil, fmt.Errorf("phrasing %d: %w", i+1, err)
			}
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
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
	// order lists the query's terms in the order its words came, and
	// words the query word each came from (words[i] for order[i]), for
	// telling an agent which of its words matched.
	order, words []string
	// expansion lists the terms pseudo-relevance feedback added.
	expansion []string
	// variants lists the morphological variants added: they add to the
	// score of sections the terms before them matched, and bring in none.
	variants []string
	// text is the phrasing as given, for the embedder.
	text string
	// fileNames maps a query term to the dotted names of the index whose
	// first piece is that term spelled otherwise than the query's word
	// ("resolvers" and the resolv of resolv.conf): their occurrences do
	// not count as the term's (see withFileNames).
	fileNames map[string][]string
}

// filters reports whether p has a filter for admits to check.
func (p *plan) filters() bool { return p.prefix != "" || p.phase >= 0 || len(p.tags) > 0 }

// admits reports whether c passes p's filters: path prefix, phase, tags.
func (p *plan) admits(c *chunk) bool {
	if p.prefix != "" && !strings.HasPrefix(c.file, p.prefix) {
		return false
	}
	return (p.phase < 0 || c.phase == p.phase) && c.hasTags(p.tags)
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
	p := &plan{n: q.N, phase: -1, text: text}
	// order and words share one allocation while the query has a few
	// words, which most have.
	words := make([]string, 2*fewWords)
	p.order, p.words = words[:0:fewWords], words[fewWords:fewWords:2*fewWords]
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
	if err := p.setTags(q.Tags); err != nil {
		return nil, err
	}
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	all := map[string]bool{} // term -> required
	phrases := map[string]bool{}
	joined := map[string]bool{}
	// share is each term's weight: a compound's pieces share one word's
	// weight beside the whole identifier, so that IPv6-only or
	// resolv.conf does not count as three words of the question.
	share := map[string]float32{}
	var ts []string
	parts := strings.Split(text, `"`)
	for i, part := range parts {
		// Odd parts are quoted, unless the last quote is unbalanced.
		quoted := i%2 == 1 && i < len(parts)-1
		tokenize(part, func(start, end int) {
			w := part[start:end]
			ts = ts[:0]
			an.word(w, true, func(t string) {
				ts = append(ts, t)
				if !all[t] {
					all[t] = false
				}
				if len(p.order) <= maxQueryTerms && !slices.Contains(p.order, t) {
					p.order = append(p.order, t)
					p.words = append(p.words, w)
				}
			})
			piece := float32(1)
			if len(ts) > 2 && ts[0] == an.compound(w) {
				piece = 1 / float32(len(ts)-1)
			}
			for k, t := range ts {
				if k == 0 {
					share[t] = 1
				} else {
					share[t] = max(share[t], piece)
				}
			}
		})
		if !quoted {
			for _, j := range joinedPairs(an, part) {
				if !joined[j] {
					joined[j] = true
					p.joined = append(p.joined, j)
				}
			}
			continue
		}
		var stream []string
		an.stream(part, func(t string) { stream = append(stream, t) })
		for _, t := range stream {
			all[t] = true
		}
		if key := strings.Join(stream, " "); len(stream) > 1 && !phrases[key] {
			phrases[key] = true
			p.phrases = append(p.phrases, stream)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("query %q has no searchable words (only stop words or punctuation)", text)
	}
	if len(all) > maxQueryTerms {
		return nil, fmt.Errorf("query has %d distinct words; at most %d are searched: keep the words that name what you look for", len(all), maxQueryTerms)
	}
	if len(p.phrases) > maxPhrases {
		return nil, fmt.Errorf("query has %d distinct quoted phrases; at most %d are checked: keep the phrases that must appear", len(p.phrases), maxPhrases)
	}
	p.terms = make([]string, 0, len(all))
	for t := range all {
		p.terms = append(p.terms, t)
	}
	slices.Sort(p.terms)
	for _, t := range p.terms {
		if share[t] != 1 {
			p.weights = make([]float32, len(p.terms))
			for i, t := range p.terms {
				p.weights[i] = share[t]
			}
			break
		}
	}
	p.required = make([]bool, len(p.terms))
	for i, t := range p.terms {
		if all[t] {
			p.required[i] = true
			p.need++
		}
	}
	return p, nil
}

// fewWords is the number of a query's words compile makes room for at
// once.
const fewWords = 4

// setTags lowercases, deduplicates and checks the filter tags.
func (p *plan) setTags(tags []string) error {
	seen := make(map[string]bool, min(len(tags), maxFilterTags+1))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		switch {
		case seen[t]:
			continue
		case t == "":
			return errors.New("filter_tags holds an empty tag: give tag names, or leave filter_tags out")
		case len(t) > maxTagBytes:
			return fmt.Errorf("filter_tags holds a tag of %d bytes; a file's tags are at most %d: give the tag as its front matter lists it", len(t), maxTagBytes)
		case len(p.tags) == maxFilterTags:
			return fmt.Errorf("filter_tags holds more than %d distinct tags, and a file carries at most %d: give the few tags a result must have", maxFilterTags, maxFileTags)
		}
		seen[t] = true
		p.tags = append(p.tags, t)
	}
	return nil
}

// joinedPairs returns each pair of adjacent words of text, lowercased and
// written together: the compound term an identifier such as fillStruct or
// directory_filters is indexed under.
func joinedPairs(an *analyzer, text string) []string {
	var out []string
	prev := ""
	tokenize(text, func(start, end int) {
		w := text[start:end]
		if !isPlainLower(w) {
			w = an.lowerString(w)
		}
		if prev != "" && len(prev)+len(w) <= maxTermLen {
			out = append(out, prev+w)
		}
		prev = w
	})
	return out
}

// word returns the query word term t came from, "" when it came from none
// (a joined pair, a term an expansion added).
func (p *plan) word(t string) string {
	if i := slices.Index(p.order, t); i >= 0 {
		return p.words[i]
	}
	return ""
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
	return containsPhrases(an, text, [][]string{phrase})
}

// containsPhrases reports whether the term stream of text holds every one
// of phrases as a contiguous run. It analyzes text once, whatever the
// number of phrases.
func containsPhrases(an *analyzer, text string, phrases [][]string) bool {
	return newPhraseCheck(phrases).in(an, text)
}

// phraseCheck checks texts for phrases (see containsPhrases), the
// beginnings of their terms marked once for all the texts.
type phraseCheck struct {
	phrases [][]string
	starts  termStarts
}

func newPhraseCheck(phrases [][]string) *phraseCheck {
	pc := &phraseCheck{phrases: phrases}
	for _, phrase := range phrases {
		for _, t := range phrase {
			pc.starts.add(t)
		}
	}
	return pc
}

// in reports whether the term stream of text holds every phrase of pc as a
// contiguous run.
func (pc *phraseCheck) in(an *analyzer, text string) bool {
	phrases := pc.phrases
	if len(phrases) == 0 {
		return true
	}
	matched := make([]int, len(phrases)) // per phrase: its terms matched so far; -1 once found
	left := len(phrases)
	an.streamAgainst(text, &pc.starts, func(t string) {
		if left == 0 {
			return
		}
		for i, phrase := range phrases {
			m := matched[i]
			if m < 0 {
				continue
			}
			for {
				if t == phrase[m] {
					m++
					if m == len(phrase) {
						m = -1
						left--
					}
					break
				}
				if m == 0 {
					break
				}
				// Restart: the longest proper prefix of the phrase that
				// ends here is found by retrying from the next start.
				m = restart(phrase, m)
			}
			matched[i] = m
		}
	})
	return left == 0
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
