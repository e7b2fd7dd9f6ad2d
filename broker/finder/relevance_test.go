package finder

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// task is one line of testdata/tasks.txt: what an agent wants, and the
// tool that does it.
type task struct{ tool, text string }

func readTasks(t testing.TB, file string) []task {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []task
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tool, text, ok := strings.Cut(line, " | ")
		if !ok {
			t.Fatalf("%s: %q is not <tool> | <task>", file, line)
		}
		out = append(out, task{strings.TrimSpace(tool), strings.TrimSpace(text)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ranker returns tool names, best first.
type ranker func(query string, n int) []string

// hits counts the tasks whose tool a ranker puts first, and in its first
// three, and lists the tasks whose tool is not first.
func hits(t testing.TB, r ranker, tasks []task) (at1, at3 int, misses []string) {
	t.Helper()
	for _, tk := range tasks {
		got := r(tk.text, 3)
		switch i := slices.Index(got, tk.tool); {
		case i == 0:
			at1++
			at3++
		case i > 0:
			at3++
			misses = append(misses, fmt.Sprintf("(at %d) %s: %q -> %v", i+1, tk.tool, tk.text, got))
		default:
			misses = append(misses, fmt.Sprintf("%s: %q -> %v", tk.tool, tk.text, got))
		}
	}
	return at1, at3, misses
}

// realTools are the tools of a project hosting the figures' servers:
// Berth's own (rag and workflow groups) and every hosted server's, as a
// session lists them. Listed once per test process.
var realTools = struct {
	once  sync.Once
	tools []*mcp.Tool
}{}

func allRealTools(t testing.TB) []*mcp.Tool {
	t.Helper()
	realTools.once.Do(func() {
		f := openFixture(t, realDecls(t, t.TempDir()))
		ctx := testCtx(t, 2*time.Minute)
		f.waitRunning(t, ctx)
		realTools.tools = listTools(t, ctx, f.connect(t, "lister", nil))
	})
	if len(realTools.tools) < 140 {
		t.Fatalf("the project lists %d tools; want Berth's own and the four servers' (about 150)", len(realTools.tools))
	}
	return realTools.tools
}

// TestFindToolsRelevance: find_tools's ranking against the task set, with
// a plain BM25 over names and descriptions (what clients' own tool search
// does) in the same run: find_tools must beat it. The goals (hits@3 >=
// 54/60, hits@1 >= 45/60) are reported by BenchmarkFinder.
func TestFindToolsRelevance(t *testing.T) {
	tools := allRealTools(t)
	c := catalogOf(t, tools)
	finder := func(q string, n int) []string {
		found, err := c.Find(q, n)
		if err != nil {
			t.Fatalf("find %q: %v", q, err)
		}
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = f.Tool.Name
		}
		return names
	}
	plain := newPlainBM25(tools)
	for _, set := range []struct{ name, file string }{{"tasks", "testdata/tasks.txt"}, {"held out", "testdata/tasks-heldout.txt"}} {
		tasks := readTasks(t, set.file)
		f1, f3, misses := hits(t, finder, tasks)
		b1, b3, _ := hits(t, plain.rank, tasks)
		t.Logf("%s (%d tasks over %d tools): find_tools hits@1 %d hits@3 %d; plain BM25 hits@1 %d hits@3 %d",
			set.name, len(tasks), len(tools), f1, f3, b1, b3)
		for _, m := range misses {
			t.Logf("  missed: %s", m)
		}
		if set.file != "testdata/tasks.txt" {
			continue
		}
		if len(tasks) != 60 {
			t.Fatalf("%s holds %d tasks, want 60", set.file, len(tasks))
		}
		if f1 <= b1 || f3 < b3 {
			t.Errorf("find_tools (hits@1 %d, @3 %d) does not beat the plain BM25 (hits@1 %d, @3 %d)", f1, f3, b1, b3)
		}
	}
}

// plainBM25 is the baseline: Okapi BM25 (k1 1.2, b 0.75) over each tool's
// name and description as one text, words lowercased and split at every
// character that is not a letter or digit (so snake_case and kebab-case
// split), no stemming and no stop words.
type plainBM25 struct {
	names []string
	tfs   []map[string]int
	lens  []int
	df    map[string]int
	avg   float64
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newPlainBM25(tools []*mcp.Tool) *plainBM25 {
	b := &plainBM25{df: map[string]int{}}
	total := 0
	for _, tool := range tools {
		words := plainWords(tool.Name + " " + tool.Description)
		tf := map[string]int{}
		for _, w := range words {
			if tf[w] == 0 {
				b.df[w]++
			}
			tf[w]++
		}
		b.names = append(b.names, tool.Name)
		b.tfs = append(b.tfs, tf)
		b.lens = append(b.lens, len(words))
		total += len(words)
	}
	b.avg = float64(total) / float64(len(tools))
	return b
}

func (b *plainBM25) rank(query string, n int) []string {
	const k1, bb = 1.2, 0.75
	type scored struct {
		i int
		s float64
	}
	var list []scored
	words := slices.Compact(slices.Sorted(slices.Values(plainWords(query))))
	N := float64(len(b.names))
	for i, tf := range b.tfs {
		s := 0.0
		for _, w := range words {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(b.df[w])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*float64(b.lens[i])/b.avg))
		}
		if s > 0 {
			list = append(list, scored{i, s})
		}
	}
	slices.SortFunc(list, func(x, y scored) int {
		if x.s != y.s {
			return cmp.Compare(y.s, x.s)
		}
		return cmp.Compare(x.i, y.i)
	})
	out := make([]string, 0, n)
	for _, s := range list[:min(n, len(list))] {
		out = append(out, b.names[s.i])
	}
	return out
}
