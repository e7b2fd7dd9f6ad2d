package search

import (
	"strings"
	"sync"
	"testing"
)

// rankVariant is one ranking tried on the suite.
type rankVariant struct {
	name  string
	rk    *ranking
	setup func() (undo func()) // nil, or changes the analysis for the run
}

// rankVariants are the rankings tried while tuning, each defaultRanking
// changed in one way, for -rel.variants (docs/benchmarks.md has their
// figures). The WordNet rows need Debian's wordnet-base and are left out
// without it.
func rankVariants(tb testing.TB) []rankVariant {
	v := func(name string, change func(r *ranking)) rankVariant {
		r := defaultRanking
		change(&r)
		return rankVariant{name: name, rk: &r}
	}
	out := []rankVariant{
		v("BM25F only: k1 1.2, no joined words", func(r *ranking) { r.k1, r.joinedWeight = 1.2, 0 }),
		v("k1 1.2", func(r *ranking) { r.k1 = 1.2 }),
		v("k1 3", func(r *ranking) { r.k1 = 3 }),
		v("no joined words", func(r *ranking) { r.joinedWeight = 0 }),
		v("no file title in the heading field", func(r *ranking) { r.title = 0 }),
		v("heading field weight 2", func(r *ranking) { r.headWeight = 2 }),
		v("heading field weight 0.7", func(r *ranking) { r.headWeight = 0.7 }),
		v("heading b 0.3", func(r *ranking) { r.headB = 0.3 }),
		v("body b 0.5", func(r *ranking) { r.bodyB = 0.5 }),
		v("own heading 4, enclosing 2", func(r *ranking) { r.own, r.anc = 4, 2 }),
		v("feedback: 3 sections, 10 terms, weight 0.15", func(r *ranking) { r.prfDocs, r.prfTerms, r.prfWeight = 3, 10, 0.15 }),
		v("feedback: 3 sections, 10 terms, weight 0.3", func(r *ranking) { r.prfDocs, r.prfTerms, r.prfWeight = 3, 10, 0.3 }),
		v("variants sharing 5 letters: 3 terms, weight 0.3", func(r *ranking) { r.variantPrefix, r.variantMax, r.variantWeight = 5, 3, 0.3 }),
	}
	type assocOpts struct {
		stat, terms, minCount int
		min                   float64
		w                     float32
		own, scaled, headOnly bool
		fuse                  bool
	}
	assoc := func(o assocOpts) func(r *ranking) {
		return func(r *ranking) {
			r.assocStat, r.assocTerms, r.assocMinCount, r.assocMin, r.assocMaxDF, r.assocWeight = o.stat, o.terms, o.minCount, o.min, 0.1, o.w
			r.assocOwn, r.assocScaled, r.assocHeadOnly, r.assocFuse = o.own, o.scaled, o.headOnly, o.fuse
		}
	}
	out = append(out,
		v("assoc pmi: 5 terms, min 2, w 0.3", assoc(assocOpts{stat: assocPMI, terms: 5, minCount: 2, w: 0.3})),
		v("assoc pmi: 5 terms, min 2, w 0.3 head only", assoc(assocOpts{stat: assocPMI, terms: 5, minCount: 2, w: 0.3, headOnly: true})),
		v("assoc pmi own: 5 terms, min 2, w 0.3 scaled head only", assoc(assocOpts{stat: assocPMI, terms: 5, minCount: 2, w: 0.3, own: true, scaled: true, headOnly: true})),
		v("assoc trans own: 5 terms, min 2, w 0.3 scaled head only", assoc(assocOpts{stat: assocTrans, terms: 5, minCount: 2, w: 0.3, own: true, scaled: true, headOnly: true})),
		v("assoc trans own: 3 terms, min 2, p>0.5, w 0.3 head only", assoc(assocOpts{stat: assocTrans, terms: 3, minCount: 2, min: 0.5, w: 0.3, own: true, headOnly: true})),
		v("assoc npmi own: 5 terms, min 2, npmi>0.3, w 0.3 scaled head only", assoc(assocOpts{stat: assocNPMI, terms: 5, minCount: 2, min: 0.3, w: 0.3, own: true, scaled: true, headOnly: true})),
		v("assoc npmi own: 5 terms, min 2, npmi>0.3, fused", assoc(assocOpts{stat: assocNPMI, terms: 5, minCount: 2, min: 0.3, w: 1, own: true, scaled: true, headOnly: true, fuse: true})),
		v("assoc trans own: 5 terms, min 2, fused", assoc(assocOpts{stat: assocTrans, terms: 5, minCount: 2, w: 1, own: true, scaled: true, headOnly: true, fuse: true})),
	)
	burst := func(alpha, base, gamma float64) func(r *ranking) {
		return func(r *ranking) { r.burstAlpha, r.burstBase, r.burstGamma = alpha, base, gamma }
	}
	out = append(out,
		v("burst: alpha 2, base 0.3, gamma 1", burst(2, 0.3, 1)),
		v("burst: alpha 2, base 0.3, gamma 0.5", burst(2, 0.3, 0.5)),
		v("burst: alpha 2, base 0.2, gamma 1", burst(2, 0.2, 1)),
		v("burst: alpha 2, base 0.4, gamma 1", burst(2, 0.4, 1)),
		v("burst: alpha 5, base 0.3, gamma 1", burst(5, 0.3, 1)),
		v("burst: alpha 1, base 0.3, gamma 1", burst(1, 0.3, 1)),
	)
	prox := func(w float64, depth, window int) func(r *ranking) {
		return func(r *ranking) { r.proxWeight, r.proxDepth, r.proxWindow = w, depth, window }
	}
	out = append(out,
		v("proximity: top 30, window 5, weight 0.5", prox(0.5, 30, 5)),
		v("proximity: top 30, window 5, weight 1", prox(1, 30, 5)),
		v("proximity: top 30, window 5, weight 2", prox(2, 30, 5)),
		v("proximity: top 30, window 3, weight 1", prox(1, 30, 3)),
		v("proximity: top 30, window 10, weight 1", prox(1, 30, 10)),
		v("proximity: top 100, window 5, weight 1", prox(1, 100, 5)),
	)
	out = append(out,
		v("fields scored apart and summed, heading x0.5", func(r *ranking) { r.fieldSum = 0.5 }),
		v("fields scored apart and summed, heading x1", func(r *ranking) { r.fieldSum = 1 }),
		v("fields scored apart and summed, heading x0.3", func(r *ranking) { r.fieldSum = 0.3 }),
	)
	out = append(out,
		v("idf capped at df 2", func(r *ranking) { r.idfCapDF = 2 }),
		v("idf capped at df 3", func(r *ranking) { r.idfCapDF = 3 }),
		v("idf capped at df 5", func(r *ranking) { r.idfCapDF = 5 }),
	)
	lead := func(w uint8, n int) func(r *ranking) { return func(r *ranking) { r.lead, r.leadTerms = w, n } }
	out = append(out,
		v("lead: first 15 body terms x1 in the heading field", lead(1, 15)),
		v("lead: first 30 body terms x1 in the heading field", lead(1, 30)),
		v("lead: first 15 body terms x2 in the heading field", lead(2, 15)),
		v("lead: first 50 body terms x1 in the heading field", lead(1, 50)),
	)
	out = append(out,
		v("fused with single-field BM25 k1 1.2", func(r *ranking) { r.fuseSingle = true }),
		v("fused with single-field BM25 k1 1.2, own heading 2", func(r *ranking) { r.fuseSingle, r.own = true, 2 }),
	)
	withStemmer := func(name string, stem func(string) string) rankVariant {
		r := defaultRanking
		return rankVariant{name: name, rk: &r, setup: func() func() {
			old := stemWord
			stemWord = stem
			queryAnalyzers = sync.Pool{New: func() any { return newAnalyzer() }}
			return func() {
				stemWord = old
				queryAnalyzers = sync.Pool{New: func() any { return newAnalyzer() }}
			}
		}}
	}
	out = append(out,
		withStemmer("stemmer: plain BM25's suffix stripper", func(w string) string {
			for _, suf := range []string{"ing", "ed", "es", "s"} {
				if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
					return w[:len(w)-len(suf)]
				}
			}
			return w
		}),
		withStemmer("stemmer: none", func(w string) string { return w }),
	)
	out = append(out,
		v("proximity weight 1 + lead 15 x1", func(r *ranking) { prox(1, 30, 5)(r); lead(1, 15)(r) }),
		v("proximity: top 30, window 5, weight 0.3", prox(0.3, 30, 5)),
		v("proximity weight 0.5 + lead 15 x1", func(r *ranking) { prox(0.5, 30, 5)(r); lead(1, 15)(r) }),
	)
	out = append(out,
		v("file prior: + 0.2 x the best other section of the file", func(r *ranking) { r.fileMax = 0.2 }),
		v("file prior: + 0.4 x the best other section of the file", func(r *ranking) { r.fileMax = 0.4 }),
	)
	ql := func(mu, head float64) func(r *ranking) { return func(r *ranking) { r.qlMu, r.qlHead = mu, head } }
	out = append(out,
		v("query likelihood, Dirichlet mu 100, heading x1", ql(100, 1)),
		v("query likelihood, Dirichlet mu 300, heading x1", ql(300, 1)),
		v("query likelihood, Dirichlet mu 1000, heading x1", ql(1000, 1)),
		v("query likelihood, Dirichlet mu 300, heading x3", ql(300, 3)),
	)
	if wn := loadWordNet(tb, wordNetDir, 99, false); wn != nil {
		out = append(out,
			v("WordNet synonyms (all senses), weight 0.3, heading only", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF, r.synHeadOnly = wn, 0.3, 0.2, true }),
			v("WordNet synonyms (all senses), weight 0.15", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF = wn, 0.15, 0.2 }))
	}
	if wn := loadWordNet(tb, wordNetDir, 2, true); wn != nil {
		out = append(out,
			v("WordNet synonyms and hypernyms (2 senses), weight 0.3, heading only", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF, r.synHeadOnly = wn, 0.3, 0.2, true }))
	}
	if wn := loadWordNet(tb, wordNetDir, 1, false); wn != nil {
		out = append(out,
			v("WordNet synonyms (first sense), weight 0.2", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF = wn, 0.2, 0.2 }),
			v("WordNet synonyms (first sense), weight 0.5", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF = wn, 0.5, 0.2 }))
	}
	if wn := loadWordNet(tb, wordNetDir, 1, true); wn != nil {
		out = append(out, v("WordNet synonyms and hypernyms, weight 0.3", func(r *ranking) { r.synonyms, r.synWeight, r.synMaxDF = wn, 0.3, 0.2 }))
	}
	return out
}

// wordNetDir is where Debian's wordnet-base puts the database.
const wordNetDir = "/usr/share/wordnet"
