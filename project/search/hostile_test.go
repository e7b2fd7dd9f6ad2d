package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hostile input: files and requests written to cost as much as they can.
// Each is built here, indexed or sent, and held to its budget (budget_test.go)
// and to the documented caps (docs/security.md, "Search limits").

// longHeadingFile is a standards file under the size cap made of one 540 KiB
// "#" heading and 480 KiB of short paragraphs (of a prose-sized vocabulary:
// what indexing many distinct words costs is not what this measures),
// split into parts, each of which repeated the heading.
func longHeadingFile() string {
	var b strings.Builder
	b.WriteString("# ")
	for b.Len() < 540<<10 {
		b.WriteString("heading ")
	}
	b.WriteString("\n\n")
	for i := 0; b.Len() < 1020<<10; i++ {
		fmt.Fprintf(&b, "Paragraph %d says little.\n\n", i%1000)
	}
	return b.String()
}

func TestHostileLongHeadingIsCappedAndBounded(t *testing.T) {
	root := t.TempDir()
	content := longHeadingFile()
	if int64(len(content)) >= DefaultMaxFileSize {
		t.Fatalf("the file is %d bytes: it must stay under the size cap to be read", len(content))
	}
	writeFiles(t, root, map[string]string{".praxis-os/standards/hostile.md": content})
	dbPath := filepath.Join(t.TempDir(), "berth.db")
	db := openDBAt(t, dbPath)
	var ix *Index
	measureUsage(t, func() { ix = openReady(t, db, "p", root) }).within(t, "indexing the file", fileCPUBudget, fileMemBudget)
	st := ix.Status()
	if st.Files+st.SkippedFiles != 1 {
		t.Fatalf("status %+v: the file is neither indexed nor skipped", st)
	}
	stored := 0
	for _, c := range ix.snap.Load().chunks {
		if c == nil {
			continue
		}
		stored += chunkCost(c.file, c.text, c.heading, c.title, c.tags)
		for _, h := range c.heading {
			if len(h) > maxHeadingBytes {
				t.Errorf("a stored heading is %d bytes, over the cap of %d", len(h), maxHeadingBytes)
			}
		}
	}
	if limit := maxExpansion(len(content)); stored > limit {
		t.Errorf("the file's sections store %d bytes, over the cap of %d for a file of %d", stored, limit, len(content))
	}
	t.Logf("%d sections store %d bytes for a file of %d", st.Chunks, stored, len(content))
	ix.Close()
	db.Close()
	if fi, err := os.Stat(dbPath); err != nil {
		t.Fatal(err)
	} else if limit := int64(4 * maxExpansion(len(content))); fi.Size() > limit {
		t.Errorf("berth.db is %d bytes for one file of %d, over %d", fi.Size(), len(content), limit)
	} else {
		t.Logf("berth.db: %d bytes", fi.Size())
	}
	// Loading it again after a restart stays within the same budget.
	db = openDBAt(t, dbPath)
	measureUsage(t, func() { ix = openReady(t, db, "p", root) }).within(t, "loading the stored index", fileCPUBudget, fileMemBudget)
	if got := ix.Status(); got.FilesRead != 0 || got.Chunks != st.Chunks {
		t.Errorf("reopened: %+v, want the stored %d sections and no file read", got, st.Chunks)
	}
}

// TestHostileExpansionIsRefused: a file of tiny sections under deep, long
// headings would store each heading path again for every few bytes of text;
// it is refused with the reason, whole.
func TestHostileExpansionIsRefused(t *testing.T) {
	root := t.TempDir()
	content := deepHeadingsFile()
	writeFiles(t, root, map[string]string{".praxis-os/standards/deep.md": content})
	db := openDB(t)
	var ix *Index
	measureUsage(t, func() { ix = openReady(t, db, "p", root) }).within(t, "refusing the file", fileCPUBudget, fileMemBudget)
	st := ix.Status()
	if st.SkippedFiles != 1 || st.Chunks != 0 {
		t.Fatalf("status %+v: want the file skipped, no section indexed", st)
	}
	e := ix.w.files[".praxis-os/standards/deep.md"]
	if e == nil || !strings.Contains(e.skip, "split the file") {
		t.Fatalf("skip reason %+v does not name the fix", e)
	}
}

// deepHeadingsFile is 900 KiB of tiny sections under three headings of the
// longest length kept.
func deepHeadingsFile() string {
	var b strings.Builder
	for _, level := range []string{"#", "##", "###"} {
		fmt.Fprintf(&b, "%s %s\n", level, strings.Repeat("h", maxHeadingBytes))
	}
	for b.Len() < 900<<10 {
		b.WriteString("#### x\ny\n")
	}
	return b.String()
}

// onePargraphFiles writes n files of about 1 MB, each one paragraph of words
// that ends with the phrase "zq xv".
func onePargraphFiles(t *testing.T, root string, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Notes\n\n")
	for i := 0; b.Len() < 1000<<10; i++ {
		fmt.Fprintf(&b, "zq word%d xv\n", i%5000)
	}
	b.WriteString("zq xv\n")
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf(".praxis-os/standards/big%02d.md", i)] = b.String()
	}
	writeFiles(t, root, files)
}

func TestHostileRepeatedPhraseIsBounded(t *testing.T) {
	root := t.TempDir()
	n := 12
	if raceEnabled {
		n = 3 // no budget is checked under the race detector: the cases alone
	}
	onePargraphFiles(t, root, n)
	ix := openReady(t, openDB(t), "p", root)
	q := strings.TrimSpace(strings.Repeat(`"zq xv" `, 249))
	if len(q) > maxQueryBytes {
		t.Fatalf("query of %d bytes", len(q))
	}
	var res *Result
	var err error
	measureUsage(t, func() { res, err = ix.Search(context.Background(), Query{Text: q}) }).within(t, "a phrase repeated 249 times", requestCPUBudget, requestMemBudget)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != n {
		t.Errorf("total %d, want the %d files that hold the phrase", res.Total, n)
	}
	p, err := compile(Query{Text: q})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.phrases) != 1 {
		t.Errorf("the plan checks %d phrases, want the one phrase once", len(p.phrases))
	}
}

func TestHostileFilterTagsAreRefused(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".praxis-os/standards/a.md": "---\ntags: [t1]\n---\n# A\nalpha\n"})
	ix := openReady(t, openDB(t), "p", root)
	tags := make([]string, 780_000)
	for i := range tags {
		tags[i] = fmt.Sprintf("t%d", i)
	}
	var err error
	measureUsage(t, func() { _, err = ix.Search(context.Background(), Query{Text: "alpha", Tags: tags}) }).within(t, "780,000 filter tags", requestCPUBudget, requestMemBudget)
	if err == nil || !strings.Contains(err.Error(), "filter_tags") {
		t.Fatalf("error %v, want filter_tags refused with its cap", err)
	}
	// The same through the tool: the SDK decodes and validates the
	// arguments, the tool refuses them.
	cs := connect(t, ix, nil)
	args := map[string]any{"query": "alpha", "filter_tags": tags}
	var res *mcp.CallToolResult
	measureUsage(t, func() {
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: args})
	}).within(t, "780,000 filter tags through search_standards (client and server)", requestCPUBudget, requestMemBudget)
	if err != nil || !res.IsError {
		t.Fatalf("call: %v %+v, want a tool error", err, res)
	}
	// The same tag many times is one tag.
	same := make([]string, 10_000)
	for i := range same {
		same[i] = "T1"
	}
	found, err := ix.Search(context.Background(), Query{Text: "alpha", Tags: same})
	if err != nil || found.Total != 1 {
		t.Fatalf("one tag repeated: %v %+v", err, found)
	}
}

// TestHostileSearchStopsWhenItsContextEnds cancels a search while it scores:
// it returns the context's error at once instead of finishing the work.
func TestHostileSearchStopsWhenItsContextEnds(t *testing.T) {
	root := t.TempDir()
	onePargraphFiles(t, root, 4)
	ix := openReady(t, openDB(t), "p", root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	checks := 0
	ix.onCheck = func(context.Context) {
		checks++
		if checks == 2 {
			cancel()
		}
	}
	var err error
	u := measureUsage(t, func() { _, err = ix.Search(ctx, Query{Text: `"zq xv" word1 word2`}) })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("search returned %v, want context.Canceled", err)
	}
	if checks != 2 {
		t.Errorf("the search went on through %d more checks after its context ended", checks-2)
	}
	u.within(t, "a cancelled search", requestCPUBudget, requestMemBudget)
}

// TestHostileCancelledCallStopsScoring: a client that gives up on a
// search_standards call (the SDK sends notifications/cancelled) ends the
// server's search while it scores.
func TestHostileCancelledCallStopsScoring(t *testing.T) {
	root := t.TempDir()
	onePargraphFiles(t, root, 4)
	ix := openReady(t, openDB(t), "p", root)
	cs := connect(t, ix, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan bool, 1)
	first := true // read and written by the server's handler goroutine only
	ix.onCheck = func(sctx context.Context) {
		if !first {
			return
		}
		first = false
		cancel() // the client gives up while the server scores
		select {
		case <-sctx.Done():
			seen <- true
		case <-time.After(10 * time.Second):
			seen <- false
		}
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"query": `"zq xv" word1`}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("call returned %v, want context.Canceled", err)
	}
	select {
	case ok := <-seen:
		if !ok {
			t.Fatal("the server's search went on: its context did not end within 10 s of the client's cancellation")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server never started scoring")
	}
}
