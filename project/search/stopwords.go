package search

// stopWords are dropped from text and queries: the articles, conjunctions,
// prepositions and pronouns that carry no meaning for search. Words such as
// "not", "never", "must" and "should" stay: standards use them with intent.
var stopWords = map[string]struct{}{}

func init() {
	for _, w := range []string{
		"a", "an", "and", "are", "as", "at", "be", "been", "but", "by",
		"for", "from", "had", "has", "have", "he", "her", "his", "i", "if",
		"in", "into", "is", "it", "its", "it's", "me", "my", "of", "on",
		"or", "our", "she", "so", "such", "than", "that", "the", "their",
		"them", "then", "there", "these", "they", "this", "those", "to",
		"us", "was", "we", "were", "what", "when", "where", "which", "who",
		"whom", "why", "will", "with", "you", "your",
	} {
		stopWords[w] = struct{}{}
		maxStopWord = max(maxStopWord, len(w))
	}
}

// maxStopWord is the length of the longest stop word: a longer word is
// none, without a lookup.
var maxStopWord int

func isStopWord(w string) bool {
	if len(w) > maxStopWord {
		return false
	}
	_, ok := stopWords[w]
	return ok
}
