package search

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
)

var relExplain = flag.Bool("rel.explain", false, "explain Berth's top-3 misses of the tuning part term by term")

// TestRelevanceExplain prints, for each tuning query Berth misses in its
// top 3, every query term's contribution to the judged sections and to the
// top results.
func TestRelevanceExplain(t *testing.T) {
	if !*relExplain {
		t.Skip("-rel.explain not set")
	}
	for _, s := range loadSuite(t) {
		if s.part != "tune" {
			continue
		}
		p := newRelProject(t, []*relSet{s})
		e := newRelBerth(t, p.root, p.sources, nil)
		prefix := "docs/" + s.name + "/"
		for _, q := range s.queries {
			res, err := e.ix.Search(context.Background(), Query{Text: q.text, N: 50})
			if err != nil {
				t.Fatal(err)
			}
			rank := 0
			for i, h := range res.Results {
				if judged(q.rel, strings.TrimPrefix(h.File, prefix)+"#"+h.Section) {
					rank = i + 1
					break
				}
			}
			if rank >= 1 && rank <= 3 {
				continue
			}
			fmt.Printf("\n=== %s: %q (judged rank %d)\n", s.name, q.text, rank)
			snap := e.ix.snap.Load()
			pl, _ := compile(Query{Text: q.text, N: 10})
			pl = e.ix.withJoined(snap, pl)
			fmt.Printf("terms: %v\n", pl.terms)
			show := func(tag string, id uint32) {
				c := snap.chunks[id]
				var parts []string
				total := 0.0
				for i, term := range pl.terms {
					tid, ok := e.ix.dict.lookup(term)
					if !ok {
						continue
					}
					post := snap.postingsOf(tid)
					for j, pid := range post.ids {
						if pid != id {
							continue
						}
						n, df := float64(snap.live), float64(len(post.ids))
						idf := math.Log(1 + (n-df+0.5)/(df+0.5))
						tt := float64(post.tfs[j])*float64(snap.norms[id].body) + float64(e.ix.rk.headWeight)*float64(post.hts[j])*float64(snap.norms[id].head)
						k1 := float64(e.ix.rk.k1)
						sc := idf * (k1 + 1) * tt / (tt + k1) * float64(pl.weight(i))
						total += sc
						parts = append(parts, fmt.Sprintf("%s(b%d h%d df%d)=%.2f", term, post.tfs[j], post.hts[j], int(df), sc))
					}
				}
				fmt.Printf("  %s %.2f %s#%s\n      %s\n", tag, total, strings.TrimPrefix(c.file, prefix), c.section(), strings.Join(parts, " "))
			}
			for i, h := range res.Results[:min(3, len(res.Results))] {
				for id, c := range snap.chunks {
					if c != nil && c.file == h.File && c.section() == h.Section && c.start == h.Lines[0] {
						show(fmt.Sprintf("top%d", i+1), uint32(id))
					}
				}
			}
			for id, c := range snap.chunks {
				if c != nil && strings.HasPrefix(c.file, prefix) && judged(q.rel, strings.TrimPrefix(c.file, prefix)+"#"+c.section()) {
					show("WANT", uint32(id))
				}
			}
		}
		e.close()
	}
}
