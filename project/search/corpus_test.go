package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The benchmark corpus: markdown files that look like praxis-os standards
// (front matter, a title, sections and subsections, paragraphs, lists and
// code fences), drawn from a Zipf-distributed vocabulary. The same seed
// gives the same files, byte for byte.

// realWords are English words mixed into the vocabulary so that stemming
// and stop words have work to do.
var realWords = strings.Fields(`the of and to in is for that with on as be by this are or it from at
an not should must never always use test tests testing tested closing close closes copies copy
copying file files handle handles error errors retry retries backoff timeout timeouts lock locks
race condition conditions database migration migrations deploy deploying release workflow phase
standard standards review reviews reviewer commit commits branch branches merge merging config
configuration logging logs metric metrics trace tracing cache caching queue queues worker workers
request requests response responses client clients server servers session sessions token tokens
secret secrets password passwords encrypt encryption input output validate validation schema`)

// corpusGen generates one corpus.
type corpusGen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpusGen(seed uint64) *corpusGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &corpusGen{r: r}
	g.vocab = append(g.vocab, realWords...)
	syll := strings.Fields("ka lo mi ne ru sa ti vo ze qua bri sto fen dal mor pix lun tav gor hem")
	seen := map[string]bool{}
	for _, w := range realWords {
		seen[w] = true
	}
	for len(g.vocab) < 30000 {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(r, 1.07, 2, uint64(len(g.vocab)-1))
	return g
}

func (g *corpusGen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *corpusGen) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

func (g *corpusGen) sentence() string {
	s := g.words(6 + g.r.IntN(14))
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (g *corpusGen) paragraph(b *strings.Builder) {
	for i := range 2 + g.r.IntN(4) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.sentence())
	}
	b.WriteString("\n\n")
}

func (g *corpusGen) title(n int) string {
	ws := strings.Fields(g.words(n))
	for i, w := range ws {
		ws[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(ws, " ")
}

func (g *corpusGen) block(b *strings.Builder) {
	switch g.r.IntN(6) {
	case 0:
		for range 3 + g.r.IntN(4) {
			fmt.Fprintf(b, "- %s\n", g.words(3+g.r.IntN(8)))
		}
		b.WriteByte('\n')
	case 1:
		b.WriteString("```go\n")
		for range 2 + g.r.IntN(5) {
			fmt.Fprintf(b, "%s_%s := %s%s(%s.%s)\n", g.word(), g.word(), g.word(),
				g.title(1), g.word(), g.word())
		}
		b.WriteString("```\n\n")
	default:
		g.paragraph(b)
	}
}

// file returns the markdown of one file.
func (g *corpusGen) file() string {
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(&b, "---\ntitle: %s\ntags: [%s]\n---\n", g.title(3), strings.ReplaceAll(g.words(3), " ", ", "))
	}
	fmt.Fprintf(&b, "# %s\n\n", g.title(2+g.r.IntN(3)))
	g.paragraph(&b)
	for range 2 + g.r.IntN(5) {
		fmt.Fprintf(&b, "## %s\n\n", g.title(1+g.r.IntN(4)))
		for range 1 + g.r.IntN(3) {
			g.block(&b)
		}
		if g.r.IntN(3) == 0 {
			fmt.Fprintf(&b, "### %s\n\n", g.title(1+g.r.IntN(3)))
			g.block(&b)
		}
	}
	return b.String()
}

// writeCorpus writes n files under root's standards, usage and workflows
// folders and returns their total size in bytes.
func writeCorpus(tb testing.TB, root string, n int, seed uint64) int64 {
	tb.Helper()
	g := newCorpusGen(seed)
	var total int64
	for i := range n {
		var dir string
		switch {
		case i%10 == 8:
			dir = fmt.Sprintf(".praxis-os/usage/u%02d", i%7)
		case i%10 == 9:
			dir = fmt.Sprintf(".praxis-os/workflows/w%02d/phases", i%13)
		default:
			dir = fmt.Sprintf(".praxis-os/standards/s%03d", i%97)
		}
		p := filepath.Join(root, dir, fmt.Sprintf("doc-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		data := g.file()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
		total += int64(len(data))
	}
	return total
}

// querySet returns a deterministic set of queries: common, mid and rare
// words, two- and three-word queries, phrases and identifiers.
func querySet(seed uint64) []string {
	g := newCorpusGen(seed)
	r := rand.New(rand.NewPCG(seed+1, seed+2))
	pick := func(lo, hi int) string { return g.vocab[lo+r.IntN(hi-lo)] }
	var qs []string
	for range 10 {
		qs = append(qs, pick(len(realWords), 300))
	}
	for range 10 {
		qs = append(qs, pick(300, 5000))
	}
	for range 10 {
		qs = append(qs, pick(len(realWords), 2000)+" "+pick(2000, 20000))
	}
	for range 10 {
		qs = append(qs, pick(0, len(realWords))+" "+pick(200, 3000)+" "+pick(3000, 30000))
	}
	for range 5 {
		// A phrase of two words that occur next to each other in the corpus.
		ws := strings.Fields(strings.TrimSuffix(strings.ToLower(g.sentence()), "."))
		for len(ws) > 2 && (isStopWord(ws[0]) || isStopWord(ws[1])) {
			ws = ws[1:]
		}
		qs = append(qs, `"`+ws[0]+" "+ws[1]+`"`)
	}
	for range 5 {
		qs = append(qs, pick(0, 2000)+"_"+pick(0, 2000))
	}
	return qs
}

func TestCorpusIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sa, sb := writeCorpus(t, a, 20, 7), writeCorpus(t, b, 20, 7)
	if sa != sb || sa == 0 {
		t.Fatalf("sizes %d and %d", sa, sb)
	}
	x, _ := os.ReadFile(filepath.Join(a, ".praxis-os/standards/s005/doc-00005.md"))
	y, _ := os.ReadFile(filepath.Join(b, ".praxis-os/standards/s005/doc-00005.md"))
	if string(x) != string(y) {
		t.Fatal("same seed, different files")
	}
	if q1, q2 := querySet(3), querySet(3); strings.Join(q1, "|") != strings.Join(q2, "|") || len(q1) != 50 {
		t.Fatal("query set not deterministic")
	}
}
