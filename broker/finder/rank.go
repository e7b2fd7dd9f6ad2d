package finder

// How a catalog ranks: a task is compiled into words (query.go), each
// with the index terms that match it and their weights: 1 for the task's
// own words and the verbs its phrasal verbs mean, relatedWeight for the
// words related to them, questionWeight and valueWeight for what its
// question asks for and the kinds of its values. A tool scores the sum of
// the weighted BM25F scores (project/search's Fields, over its name,
// description, parameters and server) of every term it holds; ties go to
// the tool listed first. Weights and groups were chosen on
// testdata/tasks.txt and checked on testdata/tasks-heldout.txt.

import (
	"cmp"
	"slices"

	"github.com/berth-dev/berth/project/search"
)

// alt is one index term a query word is matched by, with its weight.
type alt struct {
	term   string
	weight float32
}

// scoreQuery scores every tool holding a term of the query: the sum of
// its terms' BM25F scores, each weighted.
func (c *Catalog) scoreQuery(words [][]alt) []search.FieldHit {
	total := make([]float32, len(c.tools))
	var touched []int
	for _, w := range words {
		for _, a := range w {
			c.fx.TermScores(a.term, func(d int, s float32) {
				if total[d] == 0 {
					touched = append(touched, d)
				}
				total[d] += a.weight * s
			})
		}
	}
	hits := make([]search.FieldHit, 0, len(touched))
	for _, d := range touched {
		hits = append(hits, search.FieldHit{Doc: d, Score: total[d]})
	}
	return hits
}

// rank orders the tools for query, best first; ties go to the earlier.
func (c *Catalog) rank(query string) []search.FieldHit {
	words := compileQuery(query)
	hits := c.scoreQuery(words)
	slices.SortFunc(hits, func(a, b search.FieldHit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return hits
}
