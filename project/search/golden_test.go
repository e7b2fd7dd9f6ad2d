package search

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want section of golden files")

// TestGolden runs the ranking cases in testdata/golden/*.txtar. Each archive
// holds a corpus (files under .praxis-os/), a "queries" file (one query per
// line, optionally prefixed "n=N prefix=P |") and a "want" file with the
// expected ranked results. Run with -update to rewrite "want".
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			var queries string
			wantIdx := -1
			for i, f := range ar.Files {
				switch {
				case f.Name == "queries":
					queries = string(f.Data)
				case f.Name == "want":
					wantIdx = i
				default:
					writeFiles(t, root, map[string]string{f.Name: string(f.Data)})
				}
			}
			ix := openReady(t, openDB(t), "golden", root)
			got := runGoldenQueries(t, ix, queries)
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantIdx < 0 {
				t.Fatal("no want section; run with -update")
			}
			if diff := cmp.Diff(string(ar.Files[wantIdx].Data), got); diff != "" {
				t.Errorf("results differ (-want +got):\n%s", diff)
			}
		})
	}
}

func runGoldenQueries(t *testing.T, ix *Index, queries string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(queries), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q := Query{Text: line, N: 5}
		if opts, text, ok := strings.Cut(line, "|"); ok {
			q.Text = strings.TrimSpace(text)
			for _, o := range strings.Fields(opts) {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "n":
					q.N, _ = strconv.Atoi(v)
				case "prefix":
					q.PathPrefix = v
				}
			}
		}
		res, err := ix.Search(context.Background(), q)
		fmt.Fprintf(&b, "> %s\n", line)
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
			continue
		}
		fmt.Fprintf(&b, "total %d\n", res.Total)
		for i, h := range res.Results {
			fmt.Fprintf(&b, "%d. %s:%d-%d [%s] %.4f\n", i+1, h.File, h.Lines[0], h.Lines[1], h.Section, h.RelevanceScore)
		}
	}
	return b.String()
}
