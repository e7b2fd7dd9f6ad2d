package search

// ranking holds the scoring choices of an index: the field weights used
// when sections are analyzed and the BM25F parameters used when they are
// scored. Production indexes use defaultRanking; the relevance benchmark
// opens indexes with variants to measure what each choice gives
// (docs/benchmarks.md lists them with their figures).
type ranking struct {
	// Heading-field counts: a term of the section's own heading counts own
	// times, a term of an enclosing heading anc times, a term of the file's
	// title (front matter "title", else its file name) title times.
	own, anc, title uint8
	// headWeight scales the heading field against the body in BM25F.
	headWeight float32
	// k1 and the per-field length normalization (b) of BM25F.
	k1, bodyB, headB float32

	// synonyms maps a term to related terms, added to a query with
	// synWeight each; terms in more than synMaxDF of the sections are not
	// added.
	synonyms  map[string][]string
	synWeight float32
	synMaxDF  float64

	// Pseudo-relevance feedback: the prfTerms best terms of the top
	// prfDocs sections of a first pass are added with prfWeight (0: off).
	prfDocs, prfTerms int
	prfWeight         float32

	// Morphological variants: index terms sharing the first variantPrefix
	// bytes of a query term (at most variantMax of them, rarest first) are
	// added with variantWeight each (0: off).
	variantPrefix, variantMax int
	variantWeight             float32

	// joinedWeight is the weight of adjacent query words joined into an
	// identifier the index holds ("parameter names" -> parameternames).
	joinedWeight float32
}

var defaultRanking = ranking{
	own: 3, anc: 1, title: 1,
	headWeight: 1,
	k1:         2, bodyB: 0.75, headB: 0.75,
	joinedWeight: 1,
}

// rankingOf returns the ranking opts asks for.
func rankingOf(opts Options) *ranking {
	if opts.ranking != nil {
		return opts.ranking
	}
	return &defaultRanking
}
