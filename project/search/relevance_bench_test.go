package search

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The relevance benchmark: hits@1, hits@3 and MRR@10 of Berth, a plain
// BM25 baseline and bleve's default scoring on the suite, per part, in one
// run. It prints a markdown table:
//
//	go test ./project/search -run '^$' -bench Relevance -benchtime 1x
//
// -rel.variants also runs the ranking variants tried while tuning (see
// rankVariants); -rel.misses lists Berth's misses of the tuning part (the
// other parts' queries are not looked at one by one while tuning).
var (
	relVariants = flag.Bool("rel.variants", false, "also run the ranking variants tried while tuning")
	relMisses   = flag.Bool("rel.misses", false, "list the tuning part's queries Berth misses in its top 3")
	relOnly     = flag.String("rel.only", "", "with -rel.variants, run only the variants whose name holds this text")
	relPart     = flag.String("rel.part", "", "run only the sets of these parts, comma-separated (tune, aside, heldout, fresh)")
)

// relScore accumulates the metrics of one engine on one part.
type relScore struct {
	n, hit1, hit3 int
	rr            float64
}

// add scores one ranking against its judgements.
func (s *relScore) add(got []string, rel []string) (rank int) {
	s.n++
	for i, k := range got {
		if i >= 10 {
			break
		}
		if judged(rel, k) {
			rank = i + 1
			break
		}
	}
	if rank == 1 {
		s.hit1++
	}
	if rank >= 1 && rank <= 3 {
		s.hit3++
	}
	if rank > 0 {
		s.rr += 1 / float64(rank)
	}
	return rank
}

// judged reports whether key ("file#section") answers a query judged rel.
func judged(rel []string, key string) bool { return slices.Contains(rel, key) }

func (s relScore) at1() float64 { return float64(s.hit1) / float64(max(1, s.n)) }
func (s relScore) at3() float64 { return float64(s.hit3) / float64(max(1, s.n)) }
func (s relScore) mrr() float64 { return s.rr / float64(max(1, s.n)) }

// relRun is one engine's scores per part and per set.
type relRun struct {
	engine string
	parts  map[string]*relScore
	sets   map[string]*relScore
}

// relProject is a temporary project root holding sets under docs/<set>.
type relProject struct {
	root    string
	sources []string
	docs    []relDoc
}

func newRelProject(tb testing.TB, sets []*relSet) *relProject {
	tb.Helper()
	p := &relProject{root: tb.TempDir(), sources: []string{"docs"}}
	for _, s := range sets {
		s.copyInto(tb, p.root, "docs/"+s.name)
		p.docs = append(p.docs, s.docs(tb, "docs/"+s.name)...)
	}
	return p
}

// evaluate runs each set's queries (limited to limit per set when > 0)
// against engines built by mk, one engine per set ("alone") or one over
// all sets ("mixed"), and adds the scores to run.
func evaluate(tb testing.TB, sets []*relSet, limit int, mixed bool, name string, mk func(*relProject) relEngine, misses func(s *relSet, q relQuery, got []string)) relRun {
	tb.Helper()
	run := relRun{engine: name, parts: map[string]*relScore{}, sets: map[string]*relScore{}}
	score := func(e relEngine, s *relSet) {
		sc := run.parts[s.part]
		if sc == nil {
			sc = &relScore{}
			run.parts[s.part] = sc
		}
		ss := &relScore{}
		run.sets[s.name] = ss
		for i, q := range s.queries {
			if limit > 0 && i >= limit {
				break
			}
			var got []string
			ranked := e.rank
			if pr, ok := e.(prefixRanker); ok && pr.filtered() {
				ranked = func(tb testing.TB, q string, n int) []string { return pr.rankIn(tb, q, n, "docs/"+s.name) }
			}
			for _, k := range ranked(tb, q.text, 10) {
				if rest, ok := strings.CutPrefix(k, "docs/"+s.name+"/"); ok {
					got = append(got, rest)
				} else {
					got = append(got, "(other set) "+k)
				}
			}
			ss.add(got, q.rel)
			if sc.add(got, q.rel) == 0 || !slices.ContainsFunc(got[:min(3, len(got))], func(k string) bool { return judged(q.rel, k) }) {
				if misses != nil {
					misses(s, q, got)
				}
			}
		}
	}
	if mixed {
		p := newRelProject(tb, sets)
		e := mk(p)
		for _, s := range sets {
			score(e, s)
		}
		e.close()
		return run
	}
	for _, s := range sets {
		p := newRelProject(tb, []*relSet{s})
		e := mk(p)
		score(e, s)
		e.close()
	}
	return run
}

// relEngines are the engines every run compares.
func relEngines() []struct {
	name  string
	mixed bool
	mk    func(tb testing.TB, p *relProject) relEngine
} {
	return []struct {
		name  string
		mixed bool
		mk    func(tb testing.TB, p *relProject) relEngine
	}{
		{"berth", false, func(tb testing.TB, p *relProject) relEngine { return newRelBerth(tb, p.root, p.sources, nil) }},
		{"berth, all sets in one project", true, func(tb testing.TB, p *relProject) relEngine { return newRelBerth(tb, p.root, p.sources, nil) }},
		{"berth, all sets in one project, each set's queries limited to it (path_prefix)", true, func(tb testing.TB, p *relProject) relEngine {
			return filteredBerth{newRelBerth(tb, p.root, p.sources, nil)}
		}},
		{"plain BM25", false, func(tb testing.TB, p *relProject) relEngine { return newRelBM25(p.docs) }},
		{"bleve (defaults)", false, func(tb testing.TB, p *relProject) relEngine { return newRelBleve(tb, p.docs) }},
	}
}

// relTable formats runs as a markdown table: one row per engine, three
// columns per part.
func relTable(sets []*relSet, runs []relRun) string {
	parts := []string{}
	counts := map[string]int{}
	for _, s := range sets {
		if !slices.Contains(parts, s.part) {
			parts = append(parts, s.part)
		}
		counts[s.part] += len(s.queries)
	}
	var b strings.Builder
	b.WriteString("| engine |")
	for _, p := range parts {
		fmt.Fprintf(&b, " %s hits@1 | %s hits@3 | %s MRR@10 |", p, p, p)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|---|---|", len(parts)))
	b.WriteString("\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s |", r.engine)
		for _, p := range parts {
			s := r.parts[p]
			if s == nil {
				s = &relScore{}
			}
			fmt.Fprintf(&b, " %.3f | %.3f | %.3f |", s.at1(), s.at3(), s.mrr())
		}
		b.WriteString("\n")
	}
	for _, p := range parts {
		var names []string
		for _, s := range sets {
			if s.part == p {
				names = append(names, s.name)
			}
		}
		fmt.Fprintf(&b, "\n%s: %d queries over %s", p, counts[p], strings.Join(names, ", "))
	}
	return b.String()
}

// relSetTable formats runs as a markdown table: one row per set, three
// columns per engine.
func relSetTable(sets []*relSet, runs []relRun) string {
	var b strings.Builder
	b.WriteString("| set | part | queries |")
	for _, r := range runs {
		fmt.Fprintf(&b, " %s hits@1 | hits@3 | MRR@10 |", r.engine)
	}
	b.WriteString("\n|---|---|---|")
	b.WriteString(strings.Repeat("---|---|---|", len(runs)))
	b.WriteString("\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "| %s | %s | %d |", s.name, s.part, len(s.queries))
		for _, r := range runs {
			sc := r.sets[s.name]
			if sc == nil {
				sc = &relScore{}
			}
			fmt.Fprintf(&b, " %.3f | %.3f | %.3f |", sc.at1(), sc.at3(), sc.mrr())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func BenchmarkRelevance(b *testing.B) {
	sets := loadSuite(b)
	if *relPart != "" {
		parts := strings.Split(*relPart, ",")
		sets = slices.DeleteFunc(sets, func(s *relSet) bool { return !slices.Contains(parts, s.part) })
	}
	for _, s := range sets {
		s.checkJudgements(b)
	}
	for range b.N {
		var runs []relRun
		for _, e := range relEngines() {
			var misses func(s *relSet, q relQuery, got []string)
			if *relMisses && e.name == "berth" {
				misses = func(s *relSet, q relQuery, got []string) {
					if s.part == "tune" {
						fmt.Printf("miss %s: %q\n    want %q\n    got  %q\n", s.name, q.text, q.rel, got[:min(3, len(got))])
					}
				}
			}
			runs = append(runs, evaluate(b, sets, 0, e.mixed, e.name, func(p *relProject) relEngine { return e.mk(b, p) }, misses))
		}
		if *relVariants {
			for _, v := range rankVariants(b) {
				if !strings.Contains(v.name, *relOnly) {
					continue
				}
				runs = append(runs, evaluate(b, sets, 0, false, "variant: "+v.name, func(p *relProject) relEngine {
					return newRelBerth(b, p.root, p.sources, v.rk)
				}, nil))
			}
		}
		fmt.Printf("\n%s\n\n%s\n\n", relTable(sets, runs), relSetTable(sets, runs))
		for _, r := range runs {
			for p, s := range r.parts {
				if r.engine == "berth" {
					b.ReportMetric(s.at3(), p+"-hits@3")
					b.ReportMetric(s.mrr(), p+"-MRR@10")
				}
			}
		}
	}
	b.ReportMetric(0, "ns/op")
}

// TestRelevanceSmoke runs the whole relevance pipeline at a tiny size:
// every engine on three queries of each set. It checks that the suite
// loads, that every engine answers and that the table is complete; the
// figures themselves live in BenchmarkRelevance.
func TestRelevanceSmoke(t *testing.T) {
	sets := loadSuite(t)
	var small []*relSet
	for _, s := range sets {
		if s.part != "heldout" && len(small) < 2 {
			small = append(small, s)
		}
	}
	var runs []relRun
	for _, e := range relEngines() {
		answered := 0
		r := evaluate(t, small, 3, e.mixed, e.name, func(p *relProject) relEngine {
			inner := e.mk(t, p)
			return countingEngine{inner, &answered}
		}, nil)
		if answered != 3*len(small) {
			t.Errorf("%s answered %d queries, want %d", e.name, answered, 3*len(small))
		}
		runs = append(runs, r)
	}
	table := relTable(small, runs)
	if rows := strings.Count(table, "\n| "); rows != len(relEngines()) {
		t.Errorf("table has %d engine rows:\n%s", rows, table)
	}
	t.Logf("\n%s", table)
}

// countingEngine counts the queries an engine answered with any result.
type countingEngine struct {
	relEngine
	n *int
}

func (c countingEngine) rank(tb testing.TB, q string, n int) []string {
	got := c.relEngine.rank(tb, q, n)
	if len(got) > 0 {
		*c.n++
	}
	return got
}
