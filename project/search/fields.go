package search

import (
	"cmp"
	"slices"
	"strings"
)

// Fields is a small in-memory index of documents made of text fields,
// built whole and searched many times: the tools a project offers
// (broker/finder ranks them). Text is analyzed as the standards are
// (stems, stop words, identifier parts and whole identifiers; a query's
// adjacent words also match the identifier they spell) and scored with
// the standards' BM25F (score.go), each field weighted and
// length-normalized on its own. A Fields is immutable and safe for
// concurrent searches.
type Fields struct {
	specs    []FieldSpec
	docs     int
	norms    [][]float32 // per field, per document: lengthNorm
	postings map[string][]fieldPosting
	groups   map[string][]string // term -> the other terms of its FieldsOptions.Related groups
	opts     FieldsOptions
}

// FieldSpec weighs one field of the documents.
type FieldSpec struct {
	Weight float32 // the field's weight in the pseudo-frequency
	B      float32 // its length normalization, 0 (none) to 1
}

// FieldsOptions tune a Fields' ranking.
type FieldsOptions struct {
	// K1 is BM25's saturation; 0 means the standards' (2).
	K1 float32
	// Related lists groups of words that stand for one another in
	// queries ("delete", "remove", "forget"): a query word adds the other
	// words of its groups at RelatedWeight, unless the query holds them.
	Related       [][]string
	RelatedWeight float32
}

// FieldHit is one document a search found.
type FieldHit struct {
	Doc   int // its index in the documents given to NewFields
	Score float32
}

type fieldPosting struct {
	doc int32
	tf  []uint16 // by field
}

// NewFields indexes docs, each a text per field of specs (docs[i][f]).
func NewFields(specs []FieldSpec, docs [][]string, opts FieldsOptions) *Fields {
	if opts.K1 == 0 {
		opts.K1 = defaultRanking.k1
	}
	fx := &Fields{specs: specs, docs: len(docs), postings: map[string][]fieldPosting{}, opts: opts}
	an := newAnalyzer()
	lens := make([][]int, len(specs))
	for f := range specs {
		lens[f] = make([]int, len(docs))
	}
	fx.groups = groupsOf(an, opts.Related)
	for d, texts := range docs {
		counts := map[string][]uint16{}
		add := func(t string, f int) {
			c := counts[t]
			if c == nil {
				c = make([]uint16, len(specs))
				counts[t] = c
			}
			if c[f] < ^uint16(0) {
				c[f]++
			}
		}
		for f := range specs {
			if f >= len(texts) {
				break
			}
			an.terms(texts[f], func(t string) {
				add(t, f)
				lens[f][d]++
			})
		}
		for t, c := range counts {
			fx.postings[t] = append(fx.postings[t], fieldPosting{doc: int32(d), tf: c})
		}
	}
	fx.norms = make([][]float32, len(specs))
	for f, spec := range specs {
		total := 0
		for _, l := range lens[f] {
			total += l
		}
		avg := max(1, float64(total)/float64(max(1, len(docs))))
		fx.norms[f] = make([]float32, len(docs))
		for d, l := range lens[f] {
			fx.norms[f][d] = lengthNorm(spec.B, float64(l), avg)
		}
	}
	return fx
}

// RelatedTerms maps each analyzed word of groups to the other words of
// the groups holding it, analyzed as Fields analyzes text: the terms
// FieldsOptions.Related adds for a query's word, for callers that expand
// a query their own way ([Fields.TermScores]).
func RelatedTerms(groups [][]string) map[string][]string {
	return groupsOf(newAnalyzer(), groups)
}

// groupsOf maps each analyzed term of the groups to the other terms of
// the groups holding it.
func groupsOf(an *analyzer, groups [][]string) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		var terms []string
		for _, w := range g {
			an.stream(w, func(t string) {
				if !slices.Contains(terms, t) {
					terms = append(terms, t)
				}
			})
		}
		for _, t := range terms {
			for _, u := range terms {
				if u != t && !slices.Contains(out[t], u) {
					out[t] = append(out[t], u)
				}
			}
		}
	}
	return out
}

// Len is the number of documents.
func (fx *Fields) Len() int { return fx.docs }

// Search ranks the documents for text and returns the best n (at most
// MaxResults), best first; ties go to the lower document index. The
// query's words are analyzed as [Index.Search]'s are ("double quotes"
// only group words here).
func (fx *Fields) Search(text string, n int) ([]FieldHit, error) {
	p, err := compile(Query{Text: strings.ReplaceAll(text, `"`, " "), N: n})
	if err != nil {
		return nil, err
	}
	p = fx.expand(p)
	scores := make([]float32, fx.docs)
	var touched []int32
	k1 := fx.opts.K1
	for i, term := range p.terms {
		pl := fx.postings[term]
		if len(pl) == 0 {
			continue
		}
		w := idf(float64(fx.docs), float64(len(pl))) * (k1 + 1) * p.weight(i)
		for _, ps := range pl {
			if scores[ps.doc] == 0 {
				touched = append(touched, ps.doc)
			}
			scores[ps.doc] += w * saturate(fx.pseudoFreq(ps), k1)
		}
	}
	hits := make([]FieldHit, 0, len(touched))
	for _, d := range touched {
		hits = append(hits, FieldHit{Doc: int(d), Score: scores[d]})
	}
	slices.SortFunc(hits, func(a, b FieldHit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return hits[:min(len(hits), p.n)], nil
}

// TermScores calls fn with each document holding term (an index term,
// as [Words] returns them) and the term's BM25F score in it, for callers
// that weigh and combine a query's terms their own way: a query's score
// in Search is the sum of its terms'.
func (fx *Fields) TermScores(term string, fn func(doc int, score float32)) {
	pl := fx.postings[term]
	if len(pl) == 0 {
		return
	}
	k1 := fx.opts.K1
	w := idf(float64(fx.docs), float64(len(pl))) * (k1 + 1)
	for _, ps := range pl {
		fn(int(ps.doc), w*saturate(fx.pseudoFreq(ps), k1))
	}
}

// pseudoFreq is BM25F's pseudo-frequency of a posting's term: its
// frequency in each field, weighted and length-normalized.
func (fx *Fields) pseudoFreq(ps fieldPosting) float32 {
	var t float32
	for f, tf := range ps.tf {
		if tf > 0 {
			t += fx.specs[f].Weight * float32(tf) * fx.norms[f][ps.doc]
		}
	}
	return t
}

// expand adds to p the joined pairs of its words that the documents hold
// as identifiers (at the standards' joined weight) and the related terms
// of its words (at RelatedWeight).
func (fx *Fields) expand(p *plan) *plan {
	var joined []string
	for _, j := range p.joined {
		if !slices.Contains(p.terms, j) && !slices.Contains(joined, j) && len(fx.postings[j]) > 0 {
			joined = append(joined, j)
		}
	}
	p = p.plus(joined, defaultRanking.joinedWeight)
	if fx.opts.RelatedWeight == 0 || len(fx.groups) == 0 {
		return p
	}
	var rel []string
	for _, t := range p.terms {
		for _, r := range fx.groups[t] {
			if !slices.Contains(p.terms, r) && !slices.Contains(rel, r) && len(fx.postings[r]) > 0 {
				rel = append(rel, r)
			}
		}
	}
	return p.plus(rel, fx.opts.RelatedWeight)
}

// Words returns the index terms of text's words in order (stemmed, stop
// words dropped, identifiers split into their parts), as Fields analyzes
// a field: for callers that compare words with a document's.
func Words(text string) []string {
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	var out []string
	an.stream(text, func(t string) { out = append(out, t) })
	return out
}
