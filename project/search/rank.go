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
	// synHeadOnly matches synonyms in the heading field only.
	synHeadOnly bool

	// Pseudo-relevance feedback: the prfTerms best terms of the top
	// prfDocs sections of a first pass are added with prfWeight (0: off).
	prfDocs, prfTerms int
	prfWeight         float32

	// Morphological variants: index terms sharing the first variantPrefix
	// bytes of a query term (at most variantMax of them, rarest first) are
	// added with variantWeight each (0: off).
	variantPrefix, variantMax int
	variantWeight             float32

	// Associations (associate.go): up to assocTerms heading terms
	// associated with the query's words (which hold at most assocMaxDF of
	// the sections; each association seen in at least assocMinCount
	// sections) are added at assocWeight (scaled by strength when
	// assocScaled; matched in the heading field only when assocHeadOnly).
	// With assocFuse the expanded ranking is fused by reciprocal rank with
	// the plain one instead.
	assocTerms, assocMinCount  int
	assocMaxDF                 float64
	assocWeight                float32
	assocScaled, assocHeadOnly bool
	assocFuse                  bool
	// assocOwn counts only the section's own heading; assocStat picks the
	// statistic (assocPMI, ...), assocMin its threshold.
	assocOwn  bool
	assocStat int
	assocMin  float64

	// Burstiness weighting (burst.go): off when burstGamma is 0.
	burstAlpha, burstBase, burstGamma float64

	// Proximity (proximity.go): off when proxWeight is 0.
	proxWeight            float64
	proxDepth, proxWindow int

	// fieldSum, when not 0, scores the fields apart and sums them, the
	// heading's saturated score weighted fieldSum (instead of BM25F).
	fieldSum float32

	// idfCapDF, when not 0, caps every term's idf at that of a term held
	// by idfCapDF sections.
	idfCapDF float64

	// The first leadTerms terms of a section's body also count lead
	// times in its heading field (0: off).
	lead      uint8
	leadTerms int

	// fuseSingle fuses the ranking by reciprocal rank with one of plain
	// BM25 (k1 1.2) over the weighted counts of both fields as one.
	fuseSingle bool

	// qlMu, when not 0, scores by query likelihood with Dirichlet
	// smoothing (mu qlMu) over body counts plus qlHead times heading counts.
	qlMu, qlHead float64

	// fileMax adds that share of the best other section's score in the
	// same file (0: off).
	fileMax float32

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
