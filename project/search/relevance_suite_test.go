package search

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// The relevance suite: real third-party markdown documentation, read from
// the Go module cache at test time (nothing of it is kept in this
// repository), and queries phrased the way an agent asks (a goal or a
// symptom, not the heading's words), each judged against the sections that
// answer it. testdata/relevance/SUITE lists the sets, the module version
// each is read from, the paths indexed and the part each belongs to:
//
//   - tune: the sets ranking changes were tried on;
//   - aside: sets never looked at while tuning, reported beside them;
//   - heldout: documentation kept out of the whole exercise (the go-sdk's
//     docs and bbolt's README), run once at the end;
//   - fresh: sets added after the figures of the three parts above had been
//     read, judged and committed before any later ranking change, so that
//     the ranking is measured on documentation no choice was made on;
//   - phrased: sets whose queries carry two or three phrasings each (the
//     first in the agent's own words, the others naming the terms it
//     expects the document to use), written and judged, and committed,
//     before any engine ran on them.
//
// A set's queries live in <set>.queries beside SUITE:
//
//	? the query, as an agent would type it
//	+ another phrasing of it   (optional: the terms an agent expects the document to use)
//	= file#Heading > Path      (one line per section that answers it)
//
// The documents come from "go mod download -json MODULE@VERSION". Without
// the module proxy (and without the module in the cache) the tests that
// need them skip with the reason; under BERTH_CI they fail instead.

const relevanceDir = "testdata/relevance"

// relSet is one document set of the suite.
type relSet struct {
	name    string
	part    string
	module  string   // MODULE@VERSION the documents are read from
	dir     string   // absolute folder holding the documents (the module's, in the module cache)
	include []string // folders or files under dir to index; empty: all of dir
	exclude []string // folders or files under the included ones left out
	queries []relQuery
}

// relQuery is one judged query.
type relQuery struct {
	text string
	more []string // the other phrasings ("+" lines), if any
	rel  []string // "file#section", file relative to the set's folder
	line int
}

// loadSuite reads SUITE and every set's queries, and finds each set's
// module in the module cache (downloading it when it is not there).
func loadSuite(tb testing.TB) []*relSet {
	tb.Helper()
	f, err := os.Open(filepath.Join(relevanceDir, "SUITE"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var sets []*relSet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 || !strings.Contains(fields[2], "@") {
			tb.Fatalf("SUITE: %q: want <set> <part> <module>@<version> [path...] [!path...]", line)
		}
		s := &relSet{name: fields[0], part: fields[1], module: fields[2]}
		for _, p := range fields[3:] {
			if ex, ok := strings.CutPrefix(p, "!"); ok {
				s.exclude = append(s.exclude, ex)
			} else {
				s.include = append(s.include, p)
			}
		}
		s.queries = loadQueries(tb, filepath.Join(relevanceDir, s.name+".queries"))
		for _, q := range s.queries {
			if s.part == "phrased" && len(q.more) == 0 {
				tb.Fatalf("%s.queries:%d: a set of part phrased gives every query another phrasing (\"+ ...\" lines)", s.name, q.line)
			}
		}
		sets = append(sets, s)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	for _, s := range sets {
		s.dir = moduleDir(tb, s.module)
	}
	return sets
}

// moduleDirs caches the folders moduleDir found, per MODULE@VERSION.
var moduleDirs sync.Map

// moduleDir is the module cache folder of mod (MODULE@VERSION), which "go
// mod download" fetches when it is not there yet. It runs outside this
// module, so that go.mod and go.sum are never touched. When the module
// cannot be had it skips the test, or fails it under BERTH_CI.
func moduleDir(tb testing.TB, mod string) string {
	tb.Helper()
	if dir, ok := moduleDirs.Load(mod); ok {
		return dir.(string)
	}
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = tb.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil && err == nil {
		err = jerr
	}
	if info.Error != "" || info.Dir == "" || err != nil {
		reason := fmt.Sprintf("the relevance suite reads %s from the module cache, and go mod download -json %s failed: %v %s (reach the module proxy, or fill the module cache)", mod, mod, err, info.Error)
		ci.Unavailable(tb, "%s", reason)
	}
	moduleDirs.Store(mod, info.Dir)
	return info.Dir
}

func loadQueries(tb testing.TB, file string) []relQuery {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var qs []relQuery
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "? "):
			qs = append(qs, relQuery{text: strings.TrimSpace(line[2:]), line: i + 1})
		case strings.HasPrefix(line, "+ ") && len(qs) > 0 && len(qs[len(qs)-1].rel) == 0:
			qs[len(qs)-1].more = append(qs[len(qs)-1].more, strings.TrimSpace(line[2:]))
		case strings.HasPrefix(line, "= ") && len(qs) > 0:
			qs[len(qs)-1].rel = append(qs[len(qs)-1].rel, strings.TrimSpace(line[2:]))
		default:
			tb.Fatalf("%s:%d: want \"? query\", \"+ another phrasing\" (before the judgements) or \"= file#section\", got %q", file, i+1, line)
		}
	}
	for _, q := range qs {
		if len(q.rel) == 0 {
			tb.Fatalf("%s:%d: query %q has no judged section", file, q.line, q.text)
		}
	}
	return qs
}

// relDoc is one section of a set, as every engine sees it.
type relDoc struct {
	key     string // "file#section", file relative to the set's folder
	file    string // path relative to the project root the engines index
	heading []string
	body    string
	c       *chunk
}

// setFiles lists the markdown files of a set: path relative to s.dir.
func (s *relSet) setFiles(tb testing.TB) []string {
	tb.Helper()
	roots := s.include
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var out []string
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(s.dir, r), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(s.dir, p)
			rel = filepath.ToSlash(rel)
			if slices.Contains(s.exclude, rel) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && isMarkdown(p) {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// docs chunks a set with Berth's chunker; prefix is the folder the set sits
// in under the project root.
func (s *relSet) docs(tb testing.TB, prefix string) []relDoc {
	tb.Helper()
	var out []relDoc
	for _, rel := range s.setFiles(tb) {
		data, err := os.ReadFile(filepath.Join(s.dir, rel))
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range mustChunks(tb, prefix+"/"+rel, string(data)) {
			out = append(out, relDoc{key: rel + "#" + c.section(), file: c.file, heading: c.heading, body: c.text[c.bodyStart:], c: c})
		}
	}
	return out
}

// checkJudgements fails when a query names a section the set does not have.
func (s *relSet) checkJudgements(tb testing.TB) {
	tb.Helper()
	have := map[string]bool{}
	for _, d := range s.docs(tb, "x") {
		have[d.key] = true
	}
	for _, q := range s.queries {
		for _, r := range q.rel {
			if !have[r] {
				tb.Errorf("%s.queries:%d: %q judges %q, which is no section of the set", s.name, q.line, q.text, r)
			}
		}
	}
}

// copyInto writes the set's markdown files under root/prefix.
func (s *relSet) copyInto(tb testing.TB, root, prefix string) {
	tb.Helper()
	for _, rel := range s.setFiles(tb) {
		data, err := os.ReadFile(filepath.Join(s.dir, rel))
		if err != nil {
			tb.Fatal(err)
		}
		dst := filepath.Join(root, prefix, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestRelevanceJudgementsNameRealSections(t *testing.T) {
	for _, s := range loadSuite(t) {
		s.checkJudgements(t)
	}
}

// TestRelevanceTreeHoldsOnlyJudgements checks that testdata/relevance holds
// the suite's list and its queries only: the documents themselves are read
// from the module cache, never copied here.
func TestRelevanceTreeHoldsOnlyJudgements(t *testing.T) {
	entries, err := os.ReadDir(relevanceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || (e.Name() != "SUITE" && filepath.Ext(e.Name()) != ".queries") {
			t.Errorf("%s/%s: the relevance folder holds SUITE and <set>.queries only; documents are read from the module cache (name the module in SUITE)", relevanceDir, e.Name())
		}
	}
}

var relSections = flag.String("rel.sections", "", "print the section keys of this set (for writing judgements)")

func TestRelevanceListSections(t *testing.T) {
	if *relSections == "" {
		t.Skip("-rel.sections not set")
	}
	for _, s := range loadSuite(t) {
		if s.name == *relSections {
			for _, d := range s.docs(t, "x") {
				fmt.Println(d.key)
			}
		}
	}
}
