package search

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// bleveEngine indexes the same sections (our chunker) into bleve v2 with
// BM25 scoring and the "en" analyzer, heading and body as separate fields,
// a heading match boosted like ours. bleve is imported only by tests.
type bleveEngine struct {
	idx  bleve.Index
	path string
	// fields makes searches load the file, heading and text of each hit,
	// the same information our search returns; without it bleve returns
	// ids only.
	fields bool
}

type bleveDoc struct {
	File    string `json:"file"`
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

func (e *bleveEngine) build(tb testing.TB, root, dir string) {
	m := bleve.NewIndexMapping()
	m.ScoringModel = index.BM25Scoring
	m.DefaultAnalyzer = en.AnalyzerName
	doc := bleve.NewDocumentMapping()
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = e.fields
	text.IncludeTermVectors = true // phrase queries need positions
	doc.AddFieldMappingsAt("heading", text)
	doc.AddFieldMappingsAt("body", text)
	file := bleve.NewTextFieldMapping()
	file.Analyzer = keyword.Name
	file.Store = e.fields
	doc.AddFieldMappingsAt("file", file)
	m.DefaultMapping = doc
	e.path = filepath.Join(dir, "bleve")
	idx, err := bleve.New(e.path, m)
	if err != nil {
		tb.Fatal(err)
	}
	e.idx = idx
	batch := idx.NewBatch()
	flush := func() {
		if err := idx.Batch(batch); err != nil {
			tb.Fatal(err)
		}
		batch.Reset()
	}
	filepath.WalkDir(filepath.Join(root, ".praxis-os"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".md" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for i, c := range mustChunks(tb, rel, string(data)) {
			d := bleveDoc{File: rel, Heading: strings.Join(c.heading, " "), Body: c.text[c.bodyStart:]}
			if err := batch.Index(rel+"#"+strconv.Itoa(i), d); err != nil {
				tb.Fatal(err)
			}
		}
		if batch.Size() >= 1000 {
			flush()
		}
		return nil
	})
	flush()
}

func (e *bleveEngine) reopen(tb testing.TB) int64 {
	if err := e.idx.Close(); err != nil {
		tb.Fatal(err)
	}
	idx, err := bleve.Open(e.path)
	if err != nil {
		tb.Fatal(err)
	}
	e.idx = idx
	return 0
}

// search asks for the top 5 hits: ids only, or with their stored fields.
func (e *bleveEngine) search(tb testing.TB, q string) int {
	var must []query.Query
	var should []query.Query
	parts := strings.Split(q, `"`)
	for i, part := range parts {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if i%2 == 1 && i < len(parts)-1 {
			ph := bleve.NewMatchPhraseQuery(part)
			ph.SetField("body")
			must = append(must, ph)
		}
		body := bleve.NewMatchQuery(part)
		body.SetField("body")
		head := bleve.NewMatchQuery(part)
		head.SetField("heading")
		head.SetBoost(float64(defaultRanking.own))
		should = append(should, body, head)
	}
	var qq query.Query = bleve.NewDisjunctionQuery(should...)
	if len(must) > 0 {
		qq = bleve.NewConjunctionQuery(append(must, qq)...)
	}
	req := bleve.NewSearchRequestOptions(qq, 5, 0, false)
	if e.fields {
		req.Fields = []string{"file", "heading", "body"}
	}
	res, err := e.idx.Search(req)
	if err != nil {
		tb.Fatalf("%q: %v", q, err)
	}
	return len(res.Hits)
}

func (e *bleveEngine) size() int64 { return dirSize(e.path) }

func (e *bleveEngine) close() { e.idx.Close() }
