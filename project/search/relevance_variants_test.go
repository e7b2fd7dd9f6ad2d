package search

import "testing"

// rankVariant is one ranking tried on the suite.
type rankVariant struct {
	name string
	rk   *ranking
}

// rankVariants are the rankings tried while tuning, each defaultRanking
// changed in one way, for -rel.variants (docs/benchmarks.md has their
// figures). The WordNet rows need Debian's wordnet-base and are left out
// without it.
func rankVariants(tb testing.TB) []rankVariant {
	v := func(name string, change func(r *ranking)) rankVariant {
		r := defaultRanking
		change(&r)
		return rankVariant{name, &r}
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
		v("RM3: 5 sections, 10 terms, weight 0.5", func(r *ranking) { r.rm3Docs, r.rm3Terms, r.rm3Weight = 5, 10, 0.5 }),
		v("RM3: 5 sections, 10 terms, weight 0.3", func(r *ranking) { r.rm3Docs, r.rm3Terms, r.rm3Weight = 5, 10, 0.3 }),
		v("variants sharing 5 letters: 3 terms, weight 0.3", func(r *ranking) { r.variantPrefix, r.variantMax, r.variantWeight = 5, 3, 0.3 }),
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
