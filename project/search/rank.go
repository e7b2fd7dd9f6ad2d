package search

// ranking holds the scoring choices of an index. Production indexes use
// defaultRanking; the relevance benchmark opens indexes with variants to
// measure what each choice gives.
type ranking struct {
}

var defaultRanking = ranking{}
