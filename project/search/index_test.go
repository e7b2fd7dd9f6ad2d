package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
)

var baseCorpus = map[string]string{
	".praxis-os/standards/a.md":        "# Alpha\n\nClosing file handles early.\n\n## Copies\n\nCopies of buffers.\n",
	".praxis-os/standards/sub/b.md":    "# Beta\n\nRace condition notes.\n",
	".praxis-os/usage/u.md":            "# Usage\n\nHow to deploy.\n",
	".praxis-os/workflows/w/phase.md":  "# Workflow\n\nPhase one prepares the deploy.\n",
	".praxis-os/standards/.cache/c.md": "# Hidden\n\nclosing hidden cached\n",
	".praxis-os/standards/.hidden.md":  "# Hidden\n\nclosing hidden file\n",
	".praxis-os/standards/readme.txt":  "closing: not markdown\n",
	".praxis-os/other/o.md":            "# Other\n\nclosing outside sources\n",
}

func TestSourcesAndSkips(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	writeFiles(t, root, map[string]string{
		".praxis-os/standards/big.md":    "# Big\n\nclosing " + strings.Repeat("x ", 200),
		".praxis-os/standards/latin1.md": "# Latin\n\nclosing caf\xe9\n",
	})
	var logs bytes.Buffer
	db := openDB(t)
	ix, err := Open(context.Background(), Options{
		Root: root, Sources: defaultSources, DB: db, ProjectID: "p",
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
		MaxFileSize: 300,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := files(search(t, ix, "closing"))
	if want := []string{".praxis-os/standards/a.md"}; !slices.Equal(got, want) {
		t.Errorf("closing -> %v, want %v (hidden, .cache, non-markdown, outside, too large and non-UTF-8 files skipped)", got, want)
	}
	st := ix.Status()
	if st.Files != 4 || st.SkippedFiles != 2 {
		t.Errorf("status files=%d skipped=%d, want 4 and 2", st.Files, st.SkippedFiles)
	}
	for _, msg := range []string{"file too large", "not UTF-8"} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("log lacks %q:\n%s", msg, logs.String())
		}
	}
}

func TestReopenUnchangedReadsNothing(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	writeFiles(t, root, map[string]string{".praxis-os/standards/latin1.md": "caf\xe9"})
	db := openDB(t)
	ix := openReady(t, db, "p", root)
	first := ix.Status()
	if first.FilesRead != 5 {
		t.Fatalf("first build read %d files, want 5", first.FilesRead)
	}
	before := search(t, ix, "closing copies deploy race")
	ix.Close()

	ix = openReady(t, db, "p", root)
	st := ix.Status()
	if st.FilesRead != 0 {
		t.Fatalf("reopen read %d files, want 0", st.FilesRead)
	}
	if st.Files != first.Files || st.Chunks != first.Chunks || st.Terms != first.Terms || st.SkippedFiles != 1 {
		t.Fatalf("reopened status %+v, first %+v", st, first)
	}
	after := search(t, ix, "closing copies deploy race")
	before.QueryTimeMS, after.QueryTimeMS = 0, 0
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("results changed across reopen:\n%v\n%v", before, after)
	}
	ix.Close()

	// Touch one file (same content, new mtime) and edit another: only those
	// two are read; only the edited one changes.
	touch := filepath.Join(root, ".praxis-os/usage/u.md")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(touch, later, later); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{".praxis-os/standards/sub/b.md": "# Beta\n\nDeadlock notes.\n"})
	ix = openReady(t, db, "p", root)
	if st := ix.Status(); st.FilesRead != 2 {
		t.Fatalf("reopen after 2 changes read %d files, want 2", st.FilesRead)
	}
	if got := files(search(t, ix, "deadlock")); !slices.Equal(got, []string{".praxis-os/standards/sub/b.md"}) {
		t.Fatalf("deadlock -> %v", got)
	}
	if got := files(search(t, ix, "race")); len(got) != 0 {
		t.Fatalf("race -> %v, want nothing", got)
	}
}

func TestApplyCreateEditRenameDelete(t *testing.T) {
	root, db := standardsDB(t, baseCorpus)
	ix := openReady(t, db, "p", root)
	ctx := context.Background()
	apply := func(paths ...string) {
		t.Helper()
		if err := ix.Apply(ctx, paths); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(q string, want ...string) {
		t.Helper()
		if got := files(search(t, ix, q)); !slices.Equal(got, want) {
			t.Fatalf("%q -> %v, want %v", q, got, want)
		}
	}

	writeFiles(t, root, map[string]string{".praxis-os/standards/new.md": "# New\n\nQuokka sightings.\n"})
	apply(".praxis-os/standards/new.md")
	expect("quokka", ".praxis-os/standards/new.md")

	writeFiles(t, root, map[string]string{".praxis-os/standards/new.md": "# New\n\nWombat sightings.\n"})
	apply(".praxis-os/standards/new.md")
	expect("quokka")
	expect("wombat", ".praxis-os/standards/new.md")

	if err := os.Rename(filepath.Join(root, ".praxis-os/standards/new.md"), filepath.Join(root, ".praxis-os/standards/moved.md")); err != nil {
		t.Fatal(err)
	}
	apply(".praxis-os/standards/new.md", ".praxis-os/standards/moved.md")
	expect("wombat", ".praxis-os/standards/moved.md")

	// A folder renamed and then deleted: its files follow.
	if err := os.Rename(filepath.Join(root, ".praxis-os/standards/sub"), filepath.Join(root, ".praxis-os/standards/sub2")); err != nil {
		t.Fatal(err)
	}
	apply(".praxis-os/standards/sub", ".praxis-os/standards/sub2")
	expect("race", ".praxis-os/standards/sub2/b.md")
	if err := os.RemoveAll(filepath.Join(root, ".praxis-os/standards/sub2")); err != nil {
		t.Fatal(err)
	}
	apply(".praxis-os/standards/sub2")
	expect("race")

	if err := os.Remove(filepath.Join(root, ".praxis-os/standards/moved.md")); err != nil {
		t.Fatal(err)
	}
	apply(".praxis-os/standards/moved.md", "../outside", "/abs", ".praxis-os/other/o.md")
	expect("wombat")

	// The stored copy followed every step: a reopen reads nothing and agrees.
	st := ix.Status()
	ix.Close()
	ix = openReady(t, db, "p", root)
	if got := ix.Status(); got.FilesRead != 0 || got.Chunks != st.Chunks || got.Files != st.Files {
		t.Fatalf("reopen after applies: %+v, before %+v", got, st)
	}
	expect("closing", ".praxis-os/standards/a.md")
	expect("deploy", ".praxis-os/usage/u.md", ".praxis-os/workflows/w/phase.md")
}

func TestIsolationBetweenProjects(t *testing.T) {
	db := openDB(t)
	rootA, rootB := t.TempDir(), t.TempDir()
	writeFiles(t, rootA, map[string]string{".praxis-os/standards/a.md": "# A\n\nShared word alpha.\n"})
	writeFiles(t, rootB, map[string]string{".praxis-os/standards/b.md": "# B\n\nShared word beta.\n"})
	a := openReady(t, db, "proj-a", rootA)
	b := openReady(t, db, "proj-b", rootB)
	if got := files(search(t, a, "shared word beta")); !slices.Equal(got, []string{".praxis-os/standards/a.md"}) {
		t.Fatalf("project A sees %v", got)
	}
	if got := files(search(t, b, "shared alpha")); !slices.Equal(got, []string{".praxis-os/standards/b.md"}) {
		t.Fatalf("project B sees %v", got)
	}
	// Dropping one project's index leaves the other's intact.
	a.Close()
	b.Close()
	if err := db.Area("proj-a", "index").Drop(); err != nil {
		t.Fatal(err)
	}
	b = openReady(t, db, "proj-b", rootB)
	if st := b.Status(); st.FilesRead != 0 || st.Files != 1 {
		t.Fatalf("project B after A's drop: %+v", st)
	}
}

// corruptions damage the stored index in different ways.
var corruptions = map[string]func(b *store.Bucket) error{
	"flipped byte in a chunk": func(b *store.Bucket) error {
		return flipFirst(b.Bucket(bucketChunks))
	},
	"flipped byte in postings": func(b *store.Bucket) error {
		return flipFirst(b.Bucket(bucketPostings))
	},
	"truncated file record": func(b *store.Bucket) error {
		fb := b.Bucket(bucketFiles)
		var k, v []byte
		fb.ForEach(func(key, val []byte) error {
			if k == nil {
				k, v = bytes.Clone(key), bytes.Clone(val)
			}
			return nil
		})
		return fb.Put(k, v[:len(v)/2])
	},
	"garbage key in chunks": func(b *store.Bucket) error {
		return b.Bucket(bucketChunks).Put([]byte("xyz"), []byte("garbage"))
	},
	"postings name a missing chunk": func(b *store.Bucket) error {
		return b.Bucket(bucketPostings).Put([]byte("closing"), encodePostings(&postingList{ids: []uint32{999}, tfs: []uint16{1}, hts: []uint8{0}}))
	},
	"postings out of order": func(b *store.Bucket) error {
		var e enc
		for _, v := range []uint64{2, 0, 1, 0, 0, 1, 0} { // count 2, then ids 0 and 0 again
			e.uvarint(v)
		}
		return b.Bucket(bucketPostings).Put([]byte("closing"), e.seal())
	},
	"postings shorter than a checksum": func(b *store.Bucket) error {
		return b.Bucket(bucketPostings).Put([]byte("closing"), []byte{1})
	},
	"empty postings": func(b *store.Bucket) error {
		var e enc
		e.uvarint(0)
		return b.Bucket(bucketPostings).Put([]byte("closing"), e.seal())
	},
	"old format": func(b *store.Bucket) error {
		return b.Bucket(bucketMeta).Put(keyFormat, []byte{0, 0, 0, indexFormat - 1}) // the format before this one
	},
	"interrupted full write": func(b *store.Bucket) error {
		return b.DeleteBucket(bucketMeta)
	},
	"chunk deleted": func(b *store.Bucket) error {
		return b.Bucket(bucketChunks).Delete(chunkKey(0))
	},
}

func flipFirst(b *store.Bucket) error {
	var k, v []byte
	b.ForEach(func(key, val []byte) error {
		if k == nil {
			k, v = bytes.Clone(key), bytes.Clone(val)
		}
		return nil
	})
	v[len(v)/2] ^= 0x55
	return b.Put(k, v)
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, baseCorpus)
			db := openDB(t)
			ix := openReady(t, db, "p", root)
			want := search(t, ix, "closing copies deploy race")
			ix.Close()
			if err := db.Area("p", "index").Update(corrupt); err != nil {
				t.Fatal(err)
			}
			ix = openReady(t, db, "p", root)
			st := ix.Status()
			if st.RebuildReason == "" {
				t.Fatalf("no rebuild reported: %+v", st)
			}
			got := search(t, ix, "closing copies deploy race")
			want.QueryTimeMS, got.QueryTimeMS = 0, 0
			if fmt.Sprint(want) != fmt.Sprint(got) {
				t.Fatalf("after rebuild:\n%v\nwant\n%v", got, want)
			}
			// The rebuilt copy is sound: the next open neither rebuilds nor reads.
			ix.Close()
			ix = openReady(t, db, "p", root)
			if st := ix.Status(); st.RebuildReason != "" || st.FilesRead != 0 {
				t.Fatalf("second reopen: %+v", st)
			}
		})
	}
}

// TestReopenedIndexChangesPersist edits a reopened index, whose postings
// are still the stored ones, not yet decoded: a term that leaves every
// file stays gone, new terms are found, and a second reopen agrees.
func TestReopenedIndexChangesPersist(t *testing.T) {
	root, db := standardsDB(t, baseCorpus)
	ix := openReady(t, db, "p", root)
	ix.Close()
	ix = openReady(t, db, "p", root)
	writeFiles(t, root, map[string]string{".praxis-os/standards/sub/b.md": "# Beta\n\nDeadlock notes.\n"})
	if err := os.Remove(filepath.Join(root, ".praxis-os/usage/u.md")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/sub/b.md", ".praxis-os/usage/u.md"}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for q, want := range map[string][]string{
			"race":     nil,
			"deadlock": {".praxis-os/standards/sub/b.md"},
			"deploy":   {".praxis-os/workflows/w/phase.md"},
			"copies":   {".praxis-os/standards/a.md"},
		} {
			if got := files(search(t, ix, q)); !slices.Equal(got, want) {
				t.Errorf("%s: %s -> %v, want %v", when, q, got, want)
			}
		}
	}
	check("after the edit")
	terms := ix.Status().Terms
	ix.Close()
	ix = openReady(t, db, "p", root)
	if st := ix.Status(); st.FilesRead != 0 || st.Terms != terms || st.RebuildReason != "" {
		t.Fatalf("reopened: %+v, want no file read and %d terms", st, terms)
	}
	check("reopened")
}

// TestSearchSeesWholeUpdates checks that a search never sees a half-applied
// change: every version of the file has the same word in all its sections.
func TestSearchSeesWholeUpdates(t *testing.T) {
	root := t.TempDir()
	version := func(word string) map[string]string {
		var b strings.Builder
		for i := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\nThe %s marker appears here.\n\n", i, word)
		}
		return map[string]string{".praxis-os/standards/x.md": b.String()}
	}
	writeFiles(t, root, version("alpha"))
	db := openDB(t)
	ix := openReady(t, db, "p", root)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res, err := ix.Search(context.Background(), Query{Text: "alpha beta marker", N: 10})
				if err != nil {
					errs <- err
					return
				}
				alpha := 0
				for _, h := range res.Results {
					if strings.Contains(h.Content, "alpha") {
						alpha++
					}
				}
				if len(res.Results) != 4 || (alpha != 0 && alpha != 4) {
					select {
					case errs <- fmt.Errorf("mixed state: %d results, %d alpha", len(res.Results), alpha):
					default:
					}
					return
				}
			}
		}()
	}
	for i := range 30 {
		word := []string{"alpha", "beta"}[i%2]
		writeFiles(t, root, version(word))
		if err := ix.Apply(context.Background(), []string{".praxis-os/standards/x.md"}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func TestQueryValidation(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	ix := openReady(t, openDB(t), "p", root)
	for _, q := range []Query{
		{Text: ""}, {Text: "   "}, {Text: "x", N: -1}, {Text: "x", N: 51},
		{Text: "x", PathPrefix: "/etc"}, {Text: "x", PathPrefix: "../up"},
		{Text: strings.Repeat("x ", 2000)}, {Text: "the and of"},
	} {
		if _, err := ix.Search(context.Background(), q); err == nil {
			t.Errorf("query %+v accepted", q)
		}
	}
	res, err := ix.Search(context.Background(), Query{Text: "closing", PathPrefix: "./.praxis-os/standards"})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("prefix with ./: %v %v", res, err)
	}
}

func TestClosedIndex(t *testing.T) {
	root := t.TempDir()
	ix := openReady(t, openDB(t), "p", root)
	ix.Close()
	if _, err := ix.Search(context.Background(), Query{Text: "x"}); err != ErrClosed {
		t.Errorf("search after close: %v", err)
	}
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/a.md"}); err != ErrClosed {
		t.Errorf("apply after close: %v", err)
	}
	if ix.Status().State != StateClosed {
		t.Errorf("state %q", ix.Status().State)
	}
}

func TestLongSectionContentTrimmed(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 30 {
		if i == 20 {
			b.WriteString("The needle is here.\n")
		}
		fmt.Fprintf(&b, "Line %d of filler text that says nothing much at all.\n", i)
	}
	writeFiles(t, root, map[string]string{".praxis-os/standards/long.md": b.String()})
	ix := openReady(t, openDB(t), "p", root)
	res := search(t, ix, "needle")
	if len(res.Results) != 1 {
		t.Fatalf("results %v", res)
	}
	c := res.Results[0].Content
	if len(c) > maxContentChars+10 || !strings.Contains(c, "The needle is here.") || !strings.HasPrefix(c, "…\n") {
		t.Fatalf("content not trimmed around the match (%d bytes):\n%s", len(c), c)
	}
}

// TestBodyPad checks that the length added to every body normalizes a
// body of n terms as one of n+pad would be, so that a shorter body still
// weighs more, by less than without it.
func TestBodyPad(t *testing.T) {
	s := &snapshot{}
	for _, n := range []uint32{2, 10, 20, 100, 268} { // average 80
		s.chunks = append(s.chunks, &chunk{bodyLen: n, headLen: 4})
		s.live++
		s.totalBody += uint64(n)
		s.totalHead += 4
	}
	rk := defaultRanking
	rk.bodyPad = 0
	s.computeNorms(&rk)
	bodyNorms := func() []float32 {
		var out []float32
		for _, nm := range s.norms {
			out = append(out, nm.body)
		}
		return out
	}
	plain := bodyNorms()
	if !(plain[0] > plain[1] && plain[1] > plain[2]) {
		t.Fatalf("without added length shorter bodies must weigh more: %v", plain)
	}
	rk.bodyPad = 20
	s.computeNorms(&rk)
	padded := bodyNorms()
	for i, c := range s.chunks {
		if want := lengthNorm(rk.bodyB, float64(c.bodyLen)+20, 80); padded[i] != want {
			t.Errorf("body %d with 20 added: norm %v, want %v", c.bodyLen, padded[i], want)
		}
	}
	if !(padded[0] > padded[1] && padded[0]/padded[1] < plain[0]/plain[1]) {
		t.Errorf("bodies of 2 and 10 words with 20 added: norms %v and %v, want the shorter above by less than without (%v, %v)", padded[0], padded[1], plain[0], plain[1])
	}
}

// TestReopenSeesChangesAroundSubfolders edits, while the index is closed,
// files listed before and after a subfolder of the same folder (the walk
// stats a folder's files in groups split by its subfolders) and deletes
// one: the reopen reads the two edited files alone, finds the new words and
// forgets the deleted file.
func TestReopenSeesChangesAroundSubfolders(t *testing.T) {
	root, db := standardsDB(t, map[string]string{
		".praxis-os/standards/a.md":       "# A\n\nAlpha words.\n",
		".praxis-os/standards/m/inner.md": "# Inner\n\nInner words.\n",
		".praxis-os/standards/z.md":       "# Z\n\nZulu words.\n",
		".praxis-os/standards/zz.md":      "# ZZ\n\nYankee words.\n",
	})
	ix := openReady(t, db, "p", root)
	ix.Close()

	writeFiles(t, root, map[string]string{
		".praxis-os/standards/a.md": "# A\n\nQuokka words, longer now.\n",
		".praxis-os/standards/z.md": "# Z\n\nWombat words, longer now.\n",
	})
	if err := os.Remove(filepath.Join(root, ".praxis-os/standards/zz.md")); err != nil {
		t.Fatal(err)
	}
	ix = openReady(t, db, "p", root)
	defer ix.Close()
	if st := ix.Status(); st.FilesRead != 2 || st.Files != 3 {
		t.Fatalf("reopen: %+v, want 2 files read and 3 indexed", st)
	}
	for q, want := range map[string][]string{
		"quokka": {".praxis-os/standards/a.md"},
		"wombat": {".praxis-os/standards/z.md"},
		"inner":  {".praxis-os/standards/m/inner.md"},
		"yankee": nil,
	} {
		if got := files(search(t, ix, q)); !slices.Equal(got, want) {
			t.Errorf("%s -> %v, want %v", q, got, want)
		}
	}
}

// TestReopenSeesChangesInALargeFolder edits, adds and deletes files of a
// folder larger than the walk states at once (statBatch), at both ends and
// across a batch's edge, while no index is open: the reopen reads exactly
// the edited and added files and forgets the deleted one.
func TestReopenSeesChangesInALargeFolder(t *testing.T) {
	n := 2*statBatch + 10
	name := func(i int) string { return fmt.Sprintf(".praxis-os/standards/big/f%04d.md", i) }
	start := map[string]string{}
	for i := range n {
		start[name(i)] = fmt.Sprintf("# File %d\n\nPlain words number %d.\n", i, i)
	}
	start[name(n/2)] = "# Gone\n\nEchidna words.\n"
	root, db := standardsDB(t, start)
	ix := openReady(t, db, "p", root)
	if got := files(search(t, ix, "echidna")); !slices.Equal(got, []string{name(n / 2)}) {
		t.Fatalf("echidna -> %v before the reopen", got)
	}
	ix.Close()

	edited := map[int]string{0: "quokka", statBatch - 1: "wombat", statBatch: "numbat", n - 1: "bilby"}
	changes := map[string]string{".praxis-os/standards/big/new.md": "# New\n\nPlatypus words.\n"}
	for i, word := range edited {
		changes[name(i)] = fmt.Sprintf("# File %d\n\n%s words, longer now.\n", i, word)
	}
	writeFiles(t, root, changes)
	if err := os.Remove(filepath.Join(root, name(n/2))); err != nil {
		t.Fatal(err)
	}
	ix = openReady(t, db, "p", root)
	defer ix.Close()
	if st := ix.Status(); st.FilesRead != int64(len(changes)) || st.Files != n {
		t.Fatalf("reopen: %+v, want %d files read and %d indexed", st, len(changes), n)
	}
	want := map[string][]string{"platypus": {".praxis-os/standards/big/new.md"}}
	for i, word := range edited {
		want[word] = []string{name(i)}
	}
	want["echidna"] = nil
	for q, w := range want {
		if got := files(search(t, ix, q)); !slices.Equal(got, w) {
			t.Errorf("%s -> %v, want %v", q, got, w)
		}
	}
}

// TestLoneShortPostingsValueIsRefused stores a postings bucket of one value
// shorter than its checksum: loading it reports the damage (its buffers
// are sized from the values, less their checksums).
func TestLoneShortPostingsValueIsRefused(t *testing.T) {
	_, db := standardsDB(t, nil)
	area := db.Area("p", "index")
	if err := area.Update(func(b *store.Bucket) error {
		pb, err := b.CreateBucket(bucketPostings)
		if err != nil {
			return err
		}
		return pb.Put([]byte("closing"), []byte{1})
	}); err != nil {
		t.Fatal(err)
	}
	err := area.View(func(b *store.Bucket) error {
		_, _, _, err := loadStoredPostings(b.Bucket(bucketPostings), nil)
		return err
	})
	if !errors.Is(err, errCorrupt) {
		t.Fatalf("got %v, want a corrupt record", err)
	}
}
