package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The leave-one-corpus-out sweep: every query-time choice of the ranking
// (k1, the heading field's weight, the file prior, the length added to
// every body, morphological variants, RM3 feedback) is scored on every set
// of the suite; for each set, the choice with the best mean MRR@10 over
// the other sets is reported on it, beside the textbook BM25 (relBM25)
// and the textbook BM25 with RM3, computed in the same run on the same
// sections; for the sets whose queries carry more phrasings, the ranking
// as shipped is also scored with all of a query's phrasings in one search
// (Query.Queries, fused by reciprocal rank).
// It also prints the choice with the best mean over all sets, the one that
// ships (defaultRanking), and fails when Berth falls below the textbook
// BM25's MRR@10 on a held-out set or is not above it on the mean.
//
//	go test ./project/search -run '^$' -bench RelevanceLOCO -benchtime 1x -timeout 30m

// locoChoice is one point of the sweep.
type locoChoice struct {
	name string
	rk   ranking
}

// locoIndexes are the index-time choices of the sweep (each set is indexed
// once per entry): the weight of the enclosing headings in the heading
// field.
var locoIndexes = []uint8{1, 3}

// locoChoices are the rankings the sweep tries on an index built with
// enclosing headings weighted anc: defaultRanking with its query-time
// parameters changed.
func locoChoices(anc uint8) []locoChoice {
	var out []locoChoice
	for _, k1 := range []float32{1.2, 2} {
		for _, hw := range []float32{0.7, 1, 1.5} {
			for _, prior := range []float32{0, 0.2} {
				for _, pad := range []float32{0, 10, 20, 30, 40, 60} {
					for _, variants := range []float32{0, 0.3} {
						for _, rm3 := range []float32{0, 0.3, 0.5} {
							r := defaultRanking
							r.anc = anc
							r.k1, r.headWeight, r.filePrior, r.bodyPad = k1, hw, prior, pad
							r.variantPrefix, r.variantMax, r.variantWeight = 6, 1, variants
							r.rm3Docs, r.rm3Terms, r.rm3Weight = 5, 10, rm3
							out = append(out, locoChoice{locoName(&r), r})
						}
					}
				}
			}
		}
	}
	return out
}

// locoName names a choice of the sweep by its swept parameters.
func locoName(r *ranking) string {
	name := fmt.Sprintf("enclosing headings x%d, k1 %g, heading x%g, file prior %g, body length +%g, ", r.anc, r.k1, r.headWeight, r.filePrior, r.bodyPad)
	if r.variantWeight > 0 {
		name += fmt.Sprintf("variants %g, ", r.variantWeight)
	}
	if r.rm3Weight == 0 {
		return name + "no feedback"
	}
	return name + fmt.Sprintf("RM3 %g", r.rm3Weight)
}

// scoreSet scores one engine's rankings of a set's queries.
func scoreSet(tb testing.TB, s *relSet, rank func(q string) []string) relScore {
	return scorePhrasings(tb, s, func(q relQuery) []string { return rank(q.text) })
}

// scorePhrasings scores one engine's rankings of a set's queries, each
// given with all its phrasings.
func scorePhrasings(tb testing.TB, s *relSet, rank func(q relQuery) []string) relScore {
	var sc relScore
	for _, q := range s.queries {
		var got []string
		for _, k := range rank(q) {
			got = append(got, strings.TrimPrefix(k, "docs/"+s.name+"/"))
		}
		sc.add(got, q.rel)
	}
	return sc
}

// phrased says whether the set's queries carry more phrasings.
func phrased(s *relSet) bool {
	return slices.ContainsFunc(s.queries, func(q relQuery) bool { return len(q.more) > 0 })
}

func BenchmarkRelevanceLOCO(b *testing.B) {
	sets := loadSuite(b)
	var choices []locoChoice
	for _, anc := range locoIndexes {
		choices = append(choices, locoChoices(anc)...)
	}
	for range b.N {
		// byChoice[c][i]: choice c on set i.
		byChoice := make([][]relScore, len(choices))
		for c := range byChoice {
			byChoice[c] = make([]relScore, len(sets))
		}
		textbook := make([]relScore, len(sets))
		textbookRM3 := make([]relScore, len(sets))
		shipped := make([]relScore, len(sets))
		fused := make([]relScore, len(sets)) // as shipped, every phrasing of a query in one search
		for i, s := range sets {
			p := newRelProject(b, []*relSet{s})
			for _, anc := range locoIndexes {
				built := defaultRanking
				built.anc = anc
				e := newRelBerth(b, p.root, p.sources, &built)
				for c := range choices {
					if choices[c].rk.anc == anc {
						e.useRanking(&choices[c].rk)
						byChoice[c][i] = scoreSet(b, s, func(q string) []string { return e.rank(b, q, 10) })
					}
				}
				if anc == defaultRanking.anc {
					e.useRanking(&defaultRanking)
					shipped[i] = scoreSet(b, s, func(q string) []string { return e.rank(b, q, 10) })
					if phrased(s) {
						fused[i] = scorePhrasings(b, s, func(q relQuery) []string { return e.rankPhrasings(b, q.text, q.more, 10) })
					}
				}
				e.close()
			}
			bm := newRelBM25(p.docs)
			textbook[i] = scoreSet(b, s, func(q string) []string { return bm.rank(b, q, 10) })
			bm.rm3 = true
			textbookRM3[i] = scoreSet(b, s, func(q string) []string { return bm.rank(b, q, 10) })
		}
		meanMRR := func(sc []relScore, skip int) float64 {
			sum, n := 0.0, 0
			for i, s := range sc {
				if i != skip {
					sum += s.mrr()
					n++
				}
			}
			return sum / float64(n)
		}
		best := func(skip int) int {
			bi := 0
			for c := range choices {
				if meanMRR(byChoice[c], skip) > meanMRR(byChoice[bi], skip)+1e-9 {
					bi = c
				}
			}
			return bi
		}
		loco := make([]relScore, len(sets))
		var t strings.Builder
		t.WriteString("| set | queries | Berth, leave-one-out: choice | hits@1 | hits@3 | MRR@10 | textbook BM25 hits@1 | hits@3 | MRR@10 | textbook BM25 + RM3 hits@1 | hits@3 | MRR@10 | Berth as shipped hits@1 | hits@3 | MRR@10 | as shipped, all phrasings hits@1 | hits@3 | MRR@10 |\n")
		t.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		row := func(sc relScore) string { return fmt.Sprintf("%.3f | %.3f | %.3f", sc.at1(), sc.at3(), sc.mrr()) }
		for i, s := range sets {
			c := best(i)
			loco[i] = byChoice[c][i]
			all := "- | - | -" // the set's queries have one phrasing each
			if phrased(s) {
				all = row(fused[i])
			}
			fmt.Fprintf(&t, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", s.name, len(s.queries), choices[c].name, row(loco[i]), row(textbook[i]), row(textbookRM3[i]), row(shipped[i]), all)
			if loco[i].mrr() < textbook[i].mrr() {
				b.Errorf("%s: Berth (left out, %s) MRR@10 %.3f is below the textbook BM25's %.3f", s.name, choices[c].name, loco[i].mrr(), textbook[i].mrr())
			}
		}
		mean := func(sc []relScore) string {
			var a1, a3, m float64
			for _, s := range sc {
				a1 += s.at1()
				a3 += s.at3()
				m += s.mrr()
			}
			n := float64(len(sc))
			return fmt.Sprintf("%.3f | %.3f | %.3f", a1/n, a3/n, m/n)
		}
		all := best(-1)
		fmt.Fprintf(&t, "| **mean of the sets** | | | %s | %s | %s | %s | |\n", mean(loco), mean(textbook), mean(textbookRM3), mean(shipped))
		if meanMRR(loco, -1) <= meanMRR(textbook, -1) {
			b.Errorf("Berth's mean MRR@10 %.3f is not above the textbook BM25's %.3f", meanMRR(loco, -1), meanMRR(textbook, -1))
		}
		fmt.Printf("\n%s\nTextbook BM25: k1 1.2, b 0.75, heading path x%d, suffix stemmer. Best choice over all sets: %s.\n\n", t.String(), relHeadWeight, choices[all].name)
		fmt.Println("| choice | mean MRR@10 over all sets |\n|---|---|")
		order := make([]int, len(choices))
		for c := range order {
			order[c] = c
		}
		slices.SortStableFunc(order, func(x, y int) int { return cmpFloat(meanMRR(byChoice[y], -1), meanMRR(byChoice[x], -1)) })
		for _, c := range order {
			fmt.Printf("| %s | %.3f |\n", choices[c].name, meanMRR(byChoice[c], -1))
		}
	}
	b.ReportMetric(0, "ns/op")
}
