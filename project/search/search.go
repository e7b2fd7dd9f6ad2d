package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/procs"
)

// Result is a search's answer. Its JSON field names are those of the
// praxis-os search_standards tool, so that agents written for it keep working.
type Result struct {
	Results []Hit `json:"results"`
	// Total is the number of sections that matched, of which Results holds
	// the best N.
	Total       int     `json:"total"`
	QueryTimeMS float64 `json:"query_time_ms"`
	// RetrievalMethod names how results were ranked: "bm25f" (praxis-os
	// answers "vector" or "grep_fallback" here).
	RetrievalMethod string `json:"retrieval_method"`
	// TotalTokens sums the results' Tokens.
	TotalTokens int `json:"total_tokens"`
	// ExpansionTerms are the words pseudo-relevance feedback added to the
	// query (taken from the best sections of a first pass), if any.
	ExpansionTerms []string `json:"expansion_terms,omitempty"`
}

// RetrievalMethod is the value of [Result.RetrievalMethod].
const RetrievalMethod = "bm25f"

// Hit is one matching section.
type Hit struct {
	File    string `json:"file"`    // path relative to the project root
	Section string `json:"section"` // heading path: "Title > Section > Sub"
	Lines   [2]int `json:"lines"`   // first and last line, 1-based, inclusive
	// RelevanceScore is the BM25 score: higher is better. Scores compare
	// hits of one query, not across queries.
	RelevanceScore float64 `json:"relevance_score"`
	// Content is the section's text, trimmed to a window around the
	// matches when it is long.
	Content string `json:"content"`
	// Tokens estimates the tokens Content costs a language model
	// (see estimateTokens).
	Tokens int `json:"tokens"`
	// Tags and Phase are the file's labels, when it has them.
	Tags  []string `json:"tags,omitempty"`
	Phase *int     `json:"phase,omitempty"`
	// MatchedTerms are the query's words the section holds (by stem: the
	// query's "closing" matches "closed"); ExpansionTerms the words
	// feedback added that it holds. They say why it ranked, so that an
	// agent can rephrase.
	MatchedTerms   []string `json:"matched_terms,omitempty"`
	ExpansionTerms []string `json:"expansion_terms,omitempty"`
}

// scratch holds per-search arrays indexed by chunk id; reused via a pool.
type scratch struct {
	acc     []accumulator // by chunk id
	touched []uint32
	only    []uint32 // the sections holding every required term (see score)
}

// accumulator is a section's score so far in a search and the number of
// its required terms it holds, side by side: one cache line a section.
type accumulator struct {
	score float32
	req   uint8
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Search ranks the sections matching q with BM25F over each section's
// heading field (its heading path and file title) and body (see rank.go).
// Several phrasings (q.Text and q.Queries) are each ranked and fused by
// reciprocal rank. Ties are broken by file path, then line, so results are
// deterministic. A search made while the first catch-up after Open is still
// running waits for it, as long as ctx allows.
func (ix *Index) Search(ctx context.Context, q Query) (*Result, error) {
	start := time.Now()
	plans, err := compileAll(q)
	if err != nil {
		return nil, err
	}
	if err := ix.WaitReady(ctx); err != nil && ctx.Err() != nil {
		return nil, err
	}
	if ix.isClosed.Load() {
		return nil, ErrClosed
	}
	for attempt := 1; ; attempt++ {
		by, s := ix.searchState()
		res, err := by.searchIn(ctx, start, plans, s)
		if err == nil || attempt == textRetries {
			return res, err
		}
		var dt *damagedText
		switch {
		case errors.As(err, &dt) && by == ix:
			// A damaged stored text: index its file again, then search.
			if merr := ix.mend(ctx, dt); merr != nil {
				return nil, fmt.Errorf("%w (%w)", err, merr)
			}
		case !errors.Is(err, errTextMoved):
			return res, err
		}
		// A section the search read was replaced since it began: run it
		// again on the current snapshot.
	}
}

// textRetries bounds the runs of a search whose sections keep being
// replaced under it (see errTextMoved) or whose texts are damaged.
const textRetries = 3

// searchIn runs a search's compiled phrasings against snapshot s.
func (ix *Index) searchIn(ctx context.Context, start time.Time, plans []*plan, s *snapshot) (*Result, error) {
	var err error
	n := plans[0].n
	qvecs := ix.queryVectors(ctx, plans)
	depth := n
	if len(plans) > 1 || qvecs != nil {
		depth = fuseDepth
	}
	runs := make([]ranked, len(plans))
	lists := make([][]candidate, 0, 2*len(plans))
	for i, p := range plans {
		if runs[i], err = ix.rank(ctx, s, p, depth); err != nil {
			return nil, err
		}
		lists = append(lists, runs[i].best)
	}
	method := RetrievalMethod
	for i, q := range qvecs {
		if plans[i].need > 0 {
			continue // words that must appear: the vectors cannot say
		}
		list, err := ix.vectorRanking(ctx, s, plans[i], q, fuseDepth)
		if err != nil {
			return nil, err
		}
		lists = append(lists, list)
		method = RetrievalVector
	}
	best := runs[0].best
	if len(lists) > 1 {
		best = fuse(s, lists, n)
	}
	res, err := ix.render(ctx, s, runs, best)
	if err != nil {
		return nil, err
	}
	res.RetrievalMethod = method
	res.QueryTimeMS = math.Round(float64(time.Since(start).Microseconds())) / 1000
	return res, nil
}

// candidate is a scored chunk.
type candidate struct {
	id    uint32
	score float32
	// fileNo is the chunk's file number, copied by candidates from
	// snapshot.norms (0 from elsewhere): addFilePrior reads it without
	// reaching for the chunk, a cache miss per candidate on the largest
	// candidate lists.
	fileNo uint32
}

// interrupted reports whether ctx has ended. A search checks it between
// units of its work (a term's postings, a candidate's phrases, a hit's
// window) and stops when it has.
func (ix *Index) interrupted(ctx context.Context) bool {
	if ix.onCheck != nil {
		ix.onCheck(ctx)
	}
	return ctx.Err() != nil
}

// ranked is one phrasing's ranking.
type ranked struct {
	p       *plan             // the plan as run, with the terms expansions added
	lists   []*postingList    // the postings of p's terms, by index in p.terms; nil for a term no section holds
	best    []candidate       // its best sections, best first
	total   int               // the sections that matched its first pass
	surface map[string]string // the expansion terms' surface forms; nil when there are none
}

// rank scores p against snapshot s and keeps its best depth sections; it
// stops with ctx's error when ctx ends.
func (ix *Index) rank(ctx context.Context, s *snapshot, p *plan, depth int) (ranked, error) {
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	p = ix.withVariants(s, ix.withSynonyms(s, ix.withJoined(s, ix.withFileNames(s, p))))
	buf := candsPool.Get().(*[]candidate)
	defer candsPool.Put(buf)
	lists := ix.postingsOfAll(s, p.terms, nil)
	cands, err := ix.candidates(ctx, s, p, lists, an, (*buf)[:0])
	if err != nil {
		return ranked{}, err
	}
	total := len(cands)
	if rk := ix.rk; rk.rm3Weight > 0 && len(cands) > 0 {
		exp, err := ix.relevanceModel(ctx, s, p, topN(s, cands, rk.rm3Docs))
		if err != nil {
			return ranked{}, err
		}
		if len(exp) > 0 {
			p = p.expanded(exp, rk.rm3Weight)
			lists = ix.postingsOfAll(s, p.terms[len(lists):], lists)
			if cands, err = ix.candidates(ctx, s, p, lists, an, cands[:0]); err != nil {
				return ranked{}, err
			}
		}
	}
	if ix.rk.filePrior > 0 {
		addFilePrior(s, cands, ix.rk.filePrior)
	}
	// best is a copy: cands goes back to the pool.
	r := ranked{p: p, lists: lists, best: slices.Clone(topN(s, cands, depth)), total: total}
	*buf = cands[:0]
	if len(p.expansion) > 0 {
		if r.surface, err = ix.surfaceForms(ctx, s, p.expansion, r.best); err != nil {
			return ranked{}, err
		}
	}
	return r, nil
}

// render turns the best sections into the answer: each one's text (a
// window around the matches of every phrasing when long), labels, and the
// words of every phrasing it holds.
func (ix *Index) render(ctx context.Context, s *snapshot, runs []ranked, best []candidate) (*Result, error) {
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	res := &Result{Results: make([]Hit, 0, len(best)), RetrievalMethod: RetrievalMethod}
	for _, r := range runs {
		res.Total = max(res.Total, r.total)
		for _, t := range r.p.expansion {
			if w := r.surface[t]; !slices.Contains(res.ExpansionTerms, w) {
				res.ExpansionTerms = append(res.ExpansionTerms, w)
			}
		}
	}
	// wanted, the terms a long text's window is chosen by, is made for
	// the first long text.
	var wanted map[string]bool
	explainers := make([]explainer, len(runs))
	words := 0 // the most query words a section can hold
	for i, r := range runs {
		explainers[i] = ix.explain(s, r)
		for _, t := range explainers[i].terms {
			if !t.expansion {
				words++
			}
		}
	}
	// The hits' matched words share one array, each hit room for all.
	matched := make([]string, len(best)*words)
	cs := make([]*chunk, len(best))
	for i, cd := range best {
		cs[i] = s.chunks[cd.id]
	}
	texts, err := ix.textsOf(s, cs)
	if err != nil {
		return nil, err
	}
	for i, cd := range best {
		if ix.interrupted(ctx) {
			return nil, ctx.Err()
		}
		c := cs[i]
		h := Hit{
			File:           c.file,
			Section:        c.section(),
			Lines:          [2]int{c.start, c.end},
			RelevanceScore: math.Round(float64(cd.score)*1e4) / 1e4,
			Content:        texts[i],
			Tags:           c.tags,
		}
		if len(h.Content) > maxContentChars {
			if wanted == nil {
				wanted = wantedTerms(runs)
			}
			h.Content = trimContent(an, h.Content, wanted)
		}
		h.MatchedTerms = matched[i*words : i*words : (i+1)*words]
		for k := range explainers {
			h.MatchedTerms, h.ExpansionTerms = explainers[k].why(cd.id, h.MatchedTerms, h.ExpansionTerms)
		}
		if len(h.MatchedTerms) == 0 {
			h.MatchedTerms = nil
		}
		if c.phase >= 0 {
			ph := c.phase
			h.Phase = &ph
		}
		h.Tokens = int(c.tokens)
		if len(h.Content) != len(texts[i]) { // trimmed to a window
			h.Tokens = estimateTokens(h.Content)
		}
		res.TotalTokens += h.Tokens
		res.Results = append(res.Results, h)
	}
	return res, nil
}

// wantedTerms returns the terms of runs other than their variants.
func wantedTerms(runs []ranked) map[string]bool {
	wanted := map[string]bool{}
	for _, r := range runs {
		for _, t := range r.p.terms {
			if !slices.Contains(r.p.variants, t) {
				wanted[t] = true
			}
		}
	}
	return wanted
}

// appendNew appends the items of add that list does not hold yet.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// topN returns the best n candidates, best first: higher score, then file
// path, then start line.
func topN(s *snapshot, cands []candidate, n int) []candidate {
	better := func(a, b candidate) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		ca, cb := s.chunks[a.id], s.chunks[b.id]
		if c := strings.Compare(ca.file, cb.file); c != 0 {
			return c
		}
		return cmp.Compare(ca.start, cb.start)
	}
	if len(cands) > 4*n {
		// Partial selection: keep a sorted window of the best n.
		top := make([]candidate, 0, n+1)
		for _, c := range cands {
			// Most candidates score below the window's last: they are
			// told apart by their score alone, without better's call.
			if len(top) == n && (c.score < top[n-1].score || better(c, top[n-1]) >= 0) {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, c, better)
			top = slices.Insert(top, i, c)
			if len(top) > n {
				top = top[:n]
			}
		}
		return top
	}
	slices.SortFunc(cands, better)
	return cands[:min(n, len(cands))]
}

// candidates scores p against s and returns the sections that pass its
// filters (required terms, path prefix, phrases), appended to cands (an
// empty buffer to reuse); lists holds the postings of p's terms. It stops
// with ctx's error when ctx ends.
func (ix *Index) candidates(ctx context.Context, s *snapshot, p *plan, lists []*postingList, an *analyzer, cands []candidate) ([]candidate, error) {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	if len(sc.acc) < len(s.chunks) {
		sc.acc = make([]accumulator, len(s.chunks))
	}
	sc.touched = sc.touched[:0]
	// The scratch arrays go back to the pool zeroed, whether the search
	// ends or not.
	defer func() {
		for _, id := range sc.touched {
			sc.acc[id] = accumulator{}
		}
	}()
	if err := ix.score(ctx, s, p, lists, sc); err != nil {
		return nil, err
	}
	from := len(cands)
	filtered := p.filters()
	for i, id := range sc.touched {
		acc := sc.acc[id]
		if int(acc.req) < p.need {
			continue
		}
		if i%checkEvery == 0 && ix.interrupted(ctx) {
			return nil, ctx.Err()
		}
		if s.view != nil && !s.view.has(id) {
			continue // another worktree's section
		}
		if filtered && !p.admits(s.chunks[id]) {
			continue
		}
		cands = append(cands, candidate{id: id, score: acc.score, fileNo: s.norms[id].file})
	}
	if len(p.phrases) > 0 {
		return ix.withPhrases(ctx, s, p, an, cands, from)
	}
	return cands, nil
}

// withPhrases keeps, of cands[from:], the candidates whose text holds every
// one of p's phrases. Many texts to check are split between the cores, each
// part checked by a goroutine with an analyzer and read transactions of its
// own: reading and analyzing them is most of such a search.
func (ix *Index) withPhrases(ctx context.Context, s *snapshot, p *plan, an *analyzer, cands []candidate, from int) ([]candidate, error) {
	cs := make([]*chunk, len(cands)-from)
	for i := range cs {
		cs[i] = s.chunks[cands[from+i].id]
	}
	holds := make([]bool, len(cs))
	pc := newPhraseCheck(p.phrases)
	check := func(an *analyzer, part []*chunk, holds []bool) error {
		return ix.eachText(s, part, func(i int, text string) bool {
			if ix.interrupted(ctx) {
				return false
			}
			holds[i] = pc.in(an, text)
			return true
		})
	}
	var err error
	parts, done := procs.Workers(len(cs) / phraseTextsEach)
	defer done()
	if parts > 1 {
		errs := make([]error, parts)
		var wg sync.WaitGroup
		for k := range parts {
			lo, hi := k*len(cs)/parts, (k+1)*len(cs)/parts
			wg.Go(func() {
				an := queryAnalyzers.Get().(*analyzer)
				defer queryAnalyzers.Put(an)
				errs[k] = check(an, cs[lo:hi], holds[lo:hi])
			})
		}
		wg.Wait()
		err = firstErr(errs)
	} else {
		err = check(an, cs, holds)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kept := cands[:from]
	for i, ok := range holds {
		if ok {
			kept = append(kept, cands[from+i])
		}
	}
	return kept, nil
}

// phraseTextsEach is the fewest texts a goroutine of withPhrases checks:
// below it, starting one costs more than it saves.
const phraseTextsEach = 64

// explainer tells, for the sections one ranking run returns, which of
// the query's words each holds and which expansion terms: the run's terms
// in the order they are reported (the query's own first, in its order),
// each term's postings looked up once for all the sections.
type explainer struct {
	terms   []explainTerm
	surface map[string]string
}

// explainTerm is one term a section may be said to hold.
type explainTerm struct {
	term      string
	word      string // the query word reported; "" for an expansion term
	postings  *postingList
	names     []*postingList // dotted names whose first piece is the term (see withFileNames)
	expansion bool
}

// explain returns the explainer of run r on snapshot s.
func (ix *Index) explain(s *snapshot, r ranked) explainer {
	p := r.p
	e := explainer{surface: r.surface, terms: make([]explainTerm, 0, len(p.terms))}
	add := func(t string) {
		if slices.Contains(p.variants, t) || slices.ContainsFunc(e.terms, func(x explainTerm) bool { return x.term == t }) {
			return // a variant is a hint, not the query's word
		}
		i := slices.Index(p.terms, t)
		if i < 0 || r.lists[i] == nil {
			return
		}
		pl := r.lists[i]
		et := explainTerm{term: t, postings: pl, expansion: slices.Contains(p.expansion, t)}
		if !et.expansion {
			if et.word = p.word(t); et.word == "" {
				et.word = t // a joined pair, or a term another expansion added
			}
		}
		for _, n := range p.fileNames[t] {
			et.names = append(et.names, ix.postings(s, n))
		}
		e.terms = append(e.terms, et)
	}
	for _, t := range p.order {
		add(t)
	}
	for _, t := range p.terms {
		add(t)
	}
	return e
}

// postingsOfAll appends to lists the postings in s of each of terms (nil
// for a term no section holds), and returns it: a search looks each of its
// terms up in the dictionary once.
func (ix *Index) postingsOfAll(s *snapshot, terms []string, lists []*postingList) []*postingList {
	for _, t := range terms {
		lists = append(lists, ix.postings(s, t))
	}
	return lists
}

// postings returns term's postings in s, nil when no section holds it.
func (ix *Index) postings(s *snapshot, term string) *postingList {
	tid, ok := ix.dict.lookupCached(term)
	if !ok {
		return nil
	}
	return s.postingsOf(tid)
}

// why appends to matched the query's words that section id holds and to
// expansion the expansion terms it holds (in their surface form), each
// that the list does not hold yet, and returns them.
func (e *explainer) why(id uint32, matched, expansion []string) ([]string, []string) {
	for _, t := range e.terms {
		if !t.heldBy(id) {
			continue
		}
		if t.expansion {
			expansion = appendNew(expansion, e.surface[t.term])
			continue
		}
		matched = appendNew(matched, t.word)
	}
	return matched, expansion
}

// heldBy reports whether section id holds the term other than as the
// first piece of one of its dotted names.
func (t *explainTerm) heldBy(id uint32) bool {
	tf, ht, found := t.postings.countsOf(id)
	for _, n := range t.names {
		ntf, nht, _ := n.countsOf(id)
		tf, ht = tf-min(tf, ntf), ht-min(ht, nht)
	}
	return found && (tf > 0 || ht > 0)
}

// surfaceForms maps each term to a word of the sections in top that
// analyzes to it (the term itself when none does): the form in which an
// expansion term is shown.
func (ix *Index) surfaceForms(ctx context.Context, s *snapshot, terms []string, top []candidate) (map[string]string, error) {
	an := queryAnalyzers.Get().(*analyzer)
	defer queryAnalyzers.Put(an)
	out := make(map[string]string, len(terms))
	top = top[:min(len(top), ix.rk.rm3Docs)]
	cs := make([]*chunk, len(top))
	for i, c := range top {
		cs[i] = s.chunks[c.id]
	}
	err := ix.eachText(s, cs, func(_ int, text string) bool {
		if len(out) == len(terms) || ix.interrupted(ctx) {
			return false
		}
		tokenize(text, func(start, end int) {
			w := text[start:end]
			an.word(w, false, func(t string) {
				if _, done := out[t]; !done && slices.Contains(terms, t) {
					out[t] = strings.ToLower(w)
				}
			})
		})
		return true
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, t := range terms {
		if out[t] == "" {
			out[t] = t
		}
	}
	return out, nil
}

// addFilePrior adds to each candidate w times the best score of another
// candidate of the same file.
func addFilePrior(s *snapshot, cands []candidate, w float32) {
	fs := filePriorPool.Get().(*fileScratch)
	defer filePriorPool.Put(fs)
	if len(fs.files) < int(s.fileNos) {
		fs.files = make([]fileBest, s.fileNos)
	}
	// A file's entry counts only when it carries this call's generation:
	// the entries of earlier calls are left as they are rather than
	// zeroed in a pass of their own.
	if fs.gen++; fs.gen == 0 {
		clear(fs.files)
		fs.gen = 1
	}
	gen, files := fs.gen, fs.files
	for _, c := range cands {
		fb := &files[c.fileNo]
		if fb.gen != gen {
			*fb = fileBest{gen: gen}
		}
		// The best two scores of the file so far and the best one's
		// section, kept without a branch on the scores, which no
		// processor predicts: they cost more than the rest of the loop.
		id := fb.id
		if c.score > fb.best {
			id = c.id
		}
		fb.id = id
		fb.second = max(fb.second, min(fb.best, c.score))
		fb.best = max(fb.best, c.score)
	}
	for i, c := range cands {
		fb := &files[c.fileNo]
		other := fb.best
		if fb.id == c.id {
			other = fb.second
		}
		cands[i].score += w * other
	}
}

// fileScratch holds addFilePrior's per-file scores, indexed by file
// number, and the generation of its last call.
type fileScratch struct {
	files []fileBest
	gen   uint32
}

// fileBest is the best score among a file's candidates, the section that
// has it, and the second best, for the call of generation gen.
type fileBest struct {
	best, second float32
	id, gen      uint32
}

var filePriorPool = sync.Pool{New: func() any { return new(fileScratch) }}

// candsPool holds the candidate lists of finished rankings: a query of
// common words has tens of thousands of candidates on a large project, and
// growing a new list for each query made its largest allocation.
var candsPool = sync.Pool{New: func() any { return new([]candidate) }}
