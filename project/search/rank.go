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

	// Pseudo-relevance feedback, RM3 (a relevance model of the first
	// pass's best sections, interpolated with the query; Abdul-Jaleel et
	// al. 2004): the rm3Terms most likely terms of the rm3Docs best
	// sections of a first pass, weighted by how likely each is in them
	// (every section weighted by its first-pass score), take the share
	// rm3Weight of the query's weight; its own terms keep the rest (0: off).
	rm3Docs, rm3Terms int
	rm3Weight         float32

	// Morphological variants: index terms sharing the first variantPrefix
	// bytes of a query term (at most variantMax of them, rarest first) are
	// added with variantWeight each (0: off).
	variantPrefix, variantMax int
	variantWeight             float32

	// filePrior adds to a section's score this share of the best score of
	// another matching section of its file (0: off): a file that answers
	// the question in several places lifts each of them.
	filePrior float32

	// bodyPad is added to every body's length in length normalization
	// (0: none), as the heading's words are to the length of a section in
	// a one-field BM25: a one-line section ("## Name" and a sentence) is
	// credited less for its shortness the shorter it is, smoothly, so that
	// one common word in it does not outweigh a section that answers the
	// question at length.
	bodyPad float32

	// namePieces: a query word the stemmer shortened does not match the
	// first piece of a dotted name spelled like its stem ("resolvers"
	// and resolv.conf; see withFileNames).
	namePieces bool

	// joinedWeight is the weight of adjacent query words joined into an
	// identifier the index holds ("parameter names" -> parameternames).
	joinedWeight float32
}

// defaultRanking is the choice with the best mean MRR@10 over every set of
// the relevance suite in the leave-one-corpus-out sweep
// (BenchmarkRelevanceLOCO, docs/search.md); RM3 feedback, measured there,
// did not win on the mean and is off. Variants share six bytes with the
// query's word, not five: a five-byte prefix groups hundreds of terms in a
// large vocabulary, and going through them cost more than the search.
var defaultRanking = ranking{
	own: 3, anc: 1, title: 1,
	headWeight: 0.7,
	k1:         2, bodyB: 0.75, headB: 0.75,
	joinedWeight: 1,
	filePrior:    0.2,
	bodyPad:      30,
	namePieces:   true,
	rm3Docs:      5, rm3Terms: 10,
	variantPrefix: 6, variantMax: 1, variantWeight: 0.3,
}

// rankingOf returns the ranking opts asks for.
func rankingOf(opts Options) *ranking {
	if opts.ranking != nil {
		return opts.ranking
	}
	return &defaultRanking
}
