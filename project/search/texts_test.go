package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
)

// textCorpus has three files whose sections each hold one word found
// nowhere else, so that a search names the section it must return.
var textCorpus = map[string]string{
	".praxis-os/standards/a.md": "# Alpha\n\nThe apricot section of alpha.\n\n## Second\n\nThe banana section of alpha.\n",
	".praxis-os/standards/b.md": "# Beta\n\nThe cherry section of beta.\n",
	".praxis-os/standards/c.md": "# Gamma\n\nThe damson section of gamma.\n",
}

// reopenedTextCorpus writes textCorpus, builds its index and reopens it:
// its sections are loaded without their texts. The texts the reopen then
// reads into memory (warmtexts.go) are set aside, so that its searches
// read the store.
func reopenedTextCorpus(t *testing.T) (string, *store.DB, *Index) {
	t.Helper()
	root, db := standardsDB(t, textCorpus)
	openReady(t, db, "p", root).Close()
	ix := openReady(t, db, "p", root)
	<-ix.done // the catch-up, and the texts' loading after it, are over
	ix.warm.Store(nil)
	return root, db, ix
}

// editInTurn writes and applies each file of pairs (path, content) in
// turn, one commit each: the sections the first frees, the second reuses.
func editInTurn(t *testing.T, ix *Index, root string, pairs ...string) {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		writeFiles(t, root, map[string]string{pairs[i]: pairs[i+1]})
		if err := ix.Apply(context.Background(), []string{pairs[i]}); err != nil {
			t.Fatal(err)
		}
	}
}

// onlyContent searches for word and returns the content of the one hit,
// failing t unless there is exactly one, of file rel.
func onlyContent(t *testing.T, ix *Index, word, rel string) string {
	t.Helper()
	res := search(t, ix, word)
	if len(res.Results) != 1 || res.Results[0].File != rel {
		t.Fatalf("search %q: want one hit in %s, got %v", word, rel, files(res))
	}
	return res.Results[0].Content
}

// storedOf returns the sections of file rel in s loaded without their
// text, failing t when there are none.
func storedOf(t *testing.T, s *snapshot, rel string) []*chunk {
	t.Helper()
	var out []*chunk
	for _, c := range storedChunks(t, s) {
		if c.file == rel {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no section of %s loaded without its text", rel)
	}
	return out
}

// storedChunks returns the live sections of ix's snapshot loaded without
// their text, failing t when there are none.
func storedChunks(t *testing.T, s *snapshot) []*chunk {
	t.Helper()
	var out []*chunk
	for _, c := range s.chunks {
		if c != nil && c.stored {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatal("the reopened index holds no section loaded without its text")
	}
	return out
}

func TestReopenedIndexReadsSectionTextsWhenSearched(t *testing.T) {
	_, _, ix := reopenedTextCorpus(t)
	s := ix.snap.Load()
	for _, c := range storedChunks(t, s) {
		if c.text != "" {
			t.Fatalf("section of %s loaded with its text %q", c.file, c.text)
		}
	}
	if st := ix.Status(); st.FilesRead != 0 {
		t.Fatalf("reopen read %d files", st.FilesRead)
	}
	for word, want := range map[string]string{
		"apricot": "# Alpha\n\nThe apricot section of alpha.",
		"banana":  "## Second\n\nThe banana section of alpha.",
		"cherry":  "# Beta\n\nThe cherry section of beta.",
	} {
		rel := ".praxis-os/standards/a.md"
		if word == "cherry" {
			rel = ".praxis-os/standards/b.md"
		}
		if got := onlyContent(t, ix, word, rel); strings.TrimSpace(got) != want {
			t.Fatalf("search %q returned %q, want %q", word, got, want)
		}
	}
	// A phrase is checked in the stored texts too.
	res, err := ix.Search(context.Background(), Query{Text: `"banana section"`, N: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(res); len(got) != 1 || got[0] != ".praxis-os/standards/a.md" {
		t.Fatalf("phrase search found %v", got)
	}
}

// TestSectionTextAfterEditIsNeverAnotherSections edits a reopened index so
// that a freed section id is reused by another file's section: a search's
// snapshot taken before the edits must not read the newer section's text
// under that id, and a search made now returns the new texts.
func TestSectionTextAfterEditIsNeverAnotherSections(t *testing.T) {
	root, db, ix := reopenedTextCorpus(t)
	before := ix.snap.Load()
	aChunks := storedOf(t, before, ".praxis-os/standards/a.md")
	// a.md's edit frees its ids; b.md's edit then takes them.
	editInTurn(t, ix, root,
		".praxis-os/standards/a.md", "# Alpha\n\nThe elderberry section of alpha.\n",
		".praxis-os/standards/b.md", "# Beta\n\nThe fig section of beta.\n\n## More\n\nThe grape section of beta.\n")
	cur := ix.snap.Load()
	reused := false
	for _, old := range aChunks {
		if c := cur.chunks[old.textID]; c != nil && c.file == ".praxis-os/standards/b.md" {
			reused = true
		}
	}
	if !reused {
		t.Fatal("b.md's new sections took none of a.md's freed ids: the test proves nothing")
	}
	_, err := ix.textsOf(before, aChunks)
	if !errors.Is(err, errTextMoved) {
		t.Fatalf("reading a replaced section's text under its reused id: err %v, want errTextMoved", err)
	}
	if got := onlyContent(t, ix, "elderberry", ".praxis-os/standards/a.md"); !strings.Contains(got, "elderberry") {
		t.Fatalf("edited a.md: %q", got)
	}
	if got := onlyContent(t, ix, "grape", ".praxis-os/standards/b.md"); !strings.Contains(got, "grape") {
		t.Fatalf("edited b.md: %q", got)
	}
	if res := search(t, ix, "apricot"); len(res.Results) != 0 {
		t.Fatalf("a.md's old text still found: %v", files(res))
	}
	// The texts written by the edits are found again after a reopen.
	ix.Close()
	ix = openReady(t, db, "p", root)
	if got := onlyContent(t, ix, "grape", ".praxis-os/standards/b.md"); !strings.Contains(got, "grape") {
		t.Fatalf("b.md after a reopen: %q", got)
	}
	if got := onlyContent(t, ix, "damson", ".praxis-os/standards/c.md"); !strings.Contains(got, "damson") {
		t.Fatalf("c.md after a reopen: %q", got)
	}
}

// TestSearchRunsAgainWhenItsSectionIsReplaced makes a search's sections be
// replaced, and their ids reused, while it runs: it runs again and returns
// the current texts, not the ones stored under the reused ids.
func TestSearchRunsAgainWhenItsSectionIsReplaced(t *testing.T) {
	root, _, ix := reopenedTextCorpus(t)
	ctx := context.Background()
	edited := false
	ix.onCheck = func(context.Context) {
		if edited {
			return
		}
		edited = true
		// Called from the search, which holds no lock: the edits commit
		// between its ranking and its reading of the texts.
		editInTurn(t, ix, root,
			".praxis-os/standards/c.md", "# Gamma\n\nThe quince section of gamma.\n",
			".praxis-os/standards/b.md", "# Beta\n\nThe damson plum of beta.\n")
	}
	res, err := ix.Search(ctx, Query{Text: "damson", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !edited {
		t.Fatal("the search made no check: the edits did not run")
	}
	if len(res.Results) != 1 || res.Results[0].File != ".praxis-os/standards/b.md" || !strings.Contains(res.Results[0].Content, "damson plum") {
		t.Fatalf("search after its sections were replaced: %+v", res.Results)
	}
}

// TestSectionTextsAfterRebuild rewrites a reopened index whole (most files
// changed): the unchanged files' sections, loaded without their texts,
// are stored again under their new ids, and found after another reopen.
func TestSectionTextsAfterRebuild(t *testing.T) {
	const files, changed = batchFiles + 40, batchFiles + 20
	word := func(i int) string { return fmt.Sprintf("zz%c%c", 'a'+i/26, 'a'+i%26) }
	rel := func(i int) string { return fmt.Sprintf(".praxis-os/standards/f%03d.md", i) }
	corpus := map[string]string{}
	for i := range files {
		corpus[rel(i)] = fmt.Sprintf("# File\n\n%s stays here.\n", word(i))
	}
	root, db := standardsDB(t, corpus)
	openReady(t, db, "p", root).Close()
	// More files change while the index is closed than a catch-up takes
	// one by one: it rebuilds the index, the others kept unread.
	for i := range changed {
		writeFiles(t, root, map[string]string{rel(i): fmt.Sprintf("# File\n\n%s changed, now longer.\n", word(i))})
	}
	ix := openReady(t, db, "p", root)
	if st := ix.Status(); st.FilesRead != changed {
		t.Fatalf("catch-up read %d files, want the %d changed", st.FilesRead, changed)
	}
	check := func(ix *Index) {
		t.Helper()
		for _, i := range []int{0, 1, changed - 1, changed, files - 1} {
			want := word(i) + " stays here."
			if i < changed {
				want = word(i) + " changed, now longer."
			}
			if got := onlyContent(t, ix, word(i), rel(i)); !strings.Contains(got, want) {
				t.Fatalf("%s: %q, want %q in it", rel(i), got, want)
			}
		}
	}
	check(ix)
	ix.Close()
	ix = openReady(t, db, "p", root)
	if st := ix.Status(); st.FilesRead != 0 || st.RebuildReason != "" {
		t.Fatalf("reopen after the rebuild: %+v", st)
	}
	check(ix)
}

// TestDamagedSectionTextIsMended damages stored texts: reading one fails
// with a corrupt-record error instead of returning other bytes, and a search
// that returns its section indexes its file again and answers with the
// text on disk.
func TestDamagedSectionTextIsMended(t *testing.T) {
	for name, damage := range map[string]func(v []byte) []byte{
		"flipped byte": func(v []byte) []byte { v[len(v)/2] ^= 0x55; return v },
		"other text":   func([]byte) []byte { return encodeText("# Beta\n\nSomething else entirely.\n") },
	} {
		t.Run(name, func(t *testing.T) {
			root, db, ix := reopenedTextCorpus(t)
			var cherry *chunk
			for _, c := range storedChunks(t, ix.snap.Load()) {
				if c.file == ".praxis-os/standards/b.md" {
					cherry = c
				}
			}
			ix.Close()
			if err := db.Area("p", "index").Update(func(b *store.Bucket) error {
				tb := b.Bucket(bucketTexts)
				return tb.Put(chunkKey(cherry.textID), damage(tb.Get(chunkKey(cherry.textID))))
			}); err != nil {
				t.Fatal(err)
			}
			ix = openReady(t, db, "p", root)
			s := ix.snap.Load()
			var dt *damagedText
			if _, err := ix.textsOf(s, []*chunk{s.chunks[cherry.textID]}); !errors.As(err, &dt) || !errors.Is(err, errCorrupt) {
				t.Fatalf("reading a damaged text: err %v, want a damaged text", err)
			}
			if got := onlyContent(t, ix, "cherry", ".praxis-os/standards/b.md"); !strings.Contains(got, "The cherry section of beta.") {
				t.Fatalf("search of the damaged section: %q", got)
			}
			if st := ix.Status(); st.FilesRead != 1 {
				t.Fatalf("mending read %d files, want b.md alone", st.FilesRead)
			}
			// The old section's terms left the postings with it, and the
			// mended text is stored.
			if got := onlyContent(t, ix, "beta", ".praxis-os/standards/b.md"); !strings.Contains(got, "cherry") {
				t.Fatalf("b.md after mending: %q", got)
			}
			ix.Close()
			ix = openReady(t, db, "p", root)
			if got := onlyContent(t, ix, "cherry", ".praxis-os/standards/b.md"); !strings.Contains(got, "The cherry section of beta.") {
				t.Fatalf("b.md after a reopen: %q", got)
			}
		})
	}
}

// TestReopenedIndexReadsTextsIntoMemory: after a reopen the sections'
// texts are read into memory behind the ready index, and searches take
// them from there: a text damaged in the store afterwards is still
// answered right, without mending. A section replaced since, whose id
// another section took, is never answered with the text read for the id.
func TestReopenedIndexReadsTextsIntoMemory(t *testing.T) {
	root, db := standardsDB(t, textCorpus)
	openReady(t, db, "p", root).Close()
	ix := openReady(t, db, "p", root)
	select {
	case <-ix.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the texts were not read into memory within 10s")
	}
	w := ix.warm.Load()
	stored := storedChunks(t, ix.snap.Load())
	for _, c := range stored {
		got, ok := w.text(c)
		want, err := ix.textsOf(ix.snap.Load(), []*chunk{c})
		if !ok || err != nil || got != want[0] {
			t.Fatalf("section of %s in memory: %q %v, in the store %q %v", c.file, got, ok, want, err)
		}
	}
	cherry := storedOf(t, ix.snap.Load(), ".praxis-os/standards/b.md")[0]
	if err := db.Area("p", "index").Update(func(b *store.Bucket) error {
		tb := b.Bucket(bucketTexts)
		v := tb.Get(chunkKey(cherry.textID))
		return tb.Put(chunkKey(cherry.textID), append(append([]byte(nil), v[:len(v)-5]...), '!', v[len(v)-4], v[len(v)-3], v[len(v)-2], v[len(v)-1]))
	}); err != nil {
		t.Fatal(err)
	}
	if got := onlyContent(t, ix, "cherry", ".praxis-os/standards/b.md"); !strings.Contains(got, "The cherry section of beta.") {
		t.Fatalf("search after the store's copy was damaged: %q", got)
	}
	if st := ix.Status(); st.FilesRead != 0 {
		t.Fatalf("searches read %d files: the text was not taken from memory", st.FilesRead)
	}
	// a.md's edit frees its ids and b.md's takes them. A snapshot from
	// before the edits still reads a.md's old texts (from memory; the
	// store holds b.md's under those ids now), and a section that names
	// another text than the one read for its id gets none from memory.
	before := ix.snap.Load()
	aChunks := storedOf(t, before, ".praxis-os/standards/a.md")
	editInTurn(t, ix, root,
		".praxis-os/standards/a.md", "# Alpha\n\nThe elderberry section of alpha.\n",
		".praxis-os/standards/b.md", "# Beta\n\nThe fig section of beta.\n\n## More\n\nThe grape section of beta.\n")
	old, err := ix.textsOf(before, aChunks)
	if err != nil || len(old) == 0 || !strings.Contains(strings.Join(old, ""), "apricot") {
		t.Fatalf("the snapshot before the edits read %q, %v: want a.md's old texts", old, err)
	}
	other := *aChunks[0]
	other.textCRC++
	if got, ok := w.text(&other); ok {
		t.Fatalf("a section naming another text got %q from memory", got)
	}
	if got := onlyContent(t, ix, "grape", ".praxis-os/standards/b.md"); !strings.Contains(got, "grape") {
		t.Fatalf("edited b.md: %q", got)
	}
	if res := search(t, ix, "apricot"); len(res.Results) != 0 {
		t.Fatalf("a.md's old text still found: %v", files(res))
	}
}

// Pseudo-relevance feedback (a ranking of the relevance experiments) reads
// the texts of its top sections through the store on a reopened index, as
// every reader of texts does: the same words added, the same files found,
// as on the index just built.
func TestFeedbackReadsStoredTexts(t *testing.T) {
	root, db := standardsDB(t, textCorpus)
	withFeedback := func(ix *Index) {
		r := *ix.rk
		r.rm3Docs, r.rm3Terms, r.rm3Weight = 5, 10, 0.5
		ix.rk = &r
	}
	built := openReady(t, db, "p", root)
	withFeedback(built)
	want := search(t, built, "apricot")
	built.Close()
	if len(want.Results) == 0 || len(want.Results[0].ExpansionTerms) == 0 {
		t.Fatalf("the built index: no expansion to compare (%+v)", want.Results)
	}

	ix := openReady(t, db, "p", root)
	<-ix.done // the texts' loading after the catch-up is over
	ix.warm.Store(nil)
	if len(storedChunks(t, ix.snap.Load())) == 0 {
		t.Fatal("the reopened index holds every text")
	}
	withFeedback(ix)
	got := search(t, ix, "apricot")
	if fmt.Sprint(files(got)) != fmt.Sprint(files(want)) {
		t.Fatalf("reopened: files %v, built: %v", files(got), files(want))
	}
	for i := range want.Results {
		if g, w := got.Results[i].ExpansionTerms, want.Results[i].ExpansionTerms; fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("result %d: expansion %v reopened, %v built", i, g, w)
		}
	}
}
