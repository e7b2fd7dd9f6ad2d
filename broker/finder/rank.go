package finder

// How a catalog ranks: a task is compiled into words (query.go), each
// with the index terms that match it and their weights: 1 for the task's
// own words and the verbs its phrasal verbs mean, relatedWeight for the
// words related to them, questionWeight and valueWeight for what its
// question asks for and the kinds of its values. A tool scores the sum of
// the weighted BM25F scores (project/search's Fields, over its name,
// description, parameters and server) of every term it holds, its
// name's verb counting more when the task asks for what the name says
// (scoreQuery); ties go to the tool listed first. Weights and groups were chosen on
// testdata/tasks.txt and checked on testdata/tasks-heldout.txt.

import (
	"cmp"
	"slices"

	"github.com/berth-dev/berth/project/search"
)

// verbWeight is how much more a tool's name's verb counts when it is the
// task's.
const verbWeight = 1

// alt is one index term a query word is matched by, with its weight.
type alt struct {
	term   string
	weight float32
}

// scoreQuery scores every tool holding a term of the query: the sum of
// its terms' BM25F scores, each weighted. A tool's name says what it does
// to what (read_text_file, create_branch): when the task says what to do
// (verb: its word in words, or -1) and the tool's name begins with that
// verb or a related one and holds another of the task's terms besides
// (read_text_file for "show me src/config.ts", a file), the verb's term
// counts verbWeight more.
func (c *Catalog) scoreQuery(words [][]alt, verb int) []search.FieldHit {
	total := make([]float32, len(c.tools))
	verbScore := make([]float32, len(c.tools))
	object := make([]bool, len(c.tools))
	var touched []int
	for i, w := range words {
		for _, a := range w {
			c.fx.TermScores(a.term, func(d int, s float32) {
				if total[d] == 0 {
					touched = append(touched, d)
				}
				total[d] += a.weight * s
				switch {
				case i == verb && c.names[d][0] == a.term:
					verbScore[d] = max(verbScore[d], a.weight*s)
				case i != verb && slices.Contains(c.names[d][1:], a.term):
					object[d] = true
				}
			})
		}
	}
	hits := make([]search.FieldHit, 0, len(touched))
	for _, d := range touched {
		if object[d] {
			total[d] += verbWeight * verbScore[d]
		}
		hits = append(hits, search.FieldHit{Doc: d, Score: total[d]})
	}
	return hits
}

// rank orders the tools for query, best first; ties go to the earlier.
func (c *Catalog) rank(query string) []search.FieldHit {
	words := compileQuery(query)
	verb := -1
	if v := taskVerb(query); v != "" {
		verb = slices.IndexFunc(words, func(w []alt) bool { return w[0].term == v })
	}
	hits := c.scoreQuery(words, verb)
	slices.SortFunc(hits, func(a, b search.FieldHit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return hits
}
