package search

import "math"

// score adds the BM25F score of every section holding a term of p to
// sc.scores, lists the sections it touched in sc.touched, and counts in
// sc.req the required terms each holds.
//
// BM25F (Robertson, Zaragoza and Taylor, 2004): a term's frequencies in the
// fields are length-normalized per field, weighted and summed into one
// pseudo-frequency t, which saturates once: idf * t * (k1+1) / (t + k1).
func (ix *Index) score(s *snapshot, p *plan, sc *scratch) {
	rk := ix.rk
	k1 := rk.k1
	n := float64(s.live)
	for i, term := range p.terms {
		tid, ok := ix.dict.lookup(term)
		if !ok {
			continue
		}
		pl := s.postingsOf(tid)
		if pl == nil {
			continue
		}
		df := float64(len(pl.ids))
		if rk.idfCapDF > 0 {
			df = max(df, rk.idfCapDF)
		}
		w := float32(math.Log(1+(n-df+0.5)/(df+0.5))) * (k1 + 1) * p.weight(i)
		if rk.qlMu > 0 {
			ix.scoreQL(s, pl, p.weight(i), p.required[i], sc)
			continue
		}
		req := p.required[i]
		headOnly := p.headOnly != nil && p.headOnly[i]
		for j, id := range pl.ids {
			if headOnly && pl.hts[j] == 0 {
				continue
			}
			t := float32(pl.tfs[j])*s.bodyNorm[id] + rk.headWeight*float32(pl.hts[j])*s.headNorm[id]
			if headOnly {
				t = rk.headWeight * float32(pl.hts[j]) * s.headNorm[id]
			}
			if sc.scores[id] == 0 {
				sc.touched = append(sc.touched, id)
			}
			if sc.single {
				c := s.chunks[id]
				l := float32(c.bodyLen+c.headLen) / sc.avgLen
				tt := float32(pl.tfs[j]) + float32(pl.hts[j])
				if sc.scores[id] == 0 {
					sc.touched = append(sc.touched, id)
				}
				sc.scores[id] += w / (k1 + 1) * 2.2 * tt / (tt + 1.2*(0.25+0.75*l))
				if req {
					sc.req[id]++
				}
				continue
			}
			if rk.fieldSum > 0 && !headOnly {
				tb := float32(pl.tfs[j]) * s.bodyNorm[id]
				th := float32(pl.hts[j]) * s.headNorm[id]
				sc.scores[id] += w*tb/(tb+k1) + rk.fieldSum*w*th/(th+k1)
				if req {
					sc.req[id]++
				}
				continue
			}
			sc.scores[id] += w * t / (t + k1)
			if req {
				sc.req[id]++
			}
		}
	}
}

// scoreQL adds a term's query-likelihood score with Dirichlet smoothing
// (Zhai and Lafferty, 2001) over one field of weighted counts: body tf plus
// qlHead times the heading count; the length part is added by candidates.
func (ix *Index) scoreQL(s *snapshot, pl *postingList, weight float32, req bool, sc *scratch) {
	rk := ix.rk
	cf := 0.0
	for j := range pl.ids {
		cf += float64(pl.tfs[j]) + rk.qlHead*float64(pl.hts[j])
	}
	total := float64(s.totalBody) + rk.qlHead*float64(s.totalHead)
	pc := cf / total
	for j, id := range pl.ids {
		c := float64(pl.tfs[j]) + rk.qlHead*float64(pl.hts[j])
		if sc.scores[id] == 0 {
			sc.touched = append(sc.touched, id)
		}
		sc.scores[id] += weight * float32(math.Log(1+c/(rk.qlMu*pc)))
		if req {
			sc.req[id]++
		}
	}
}
