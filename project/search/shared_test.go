package search

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/store"
)

// worktreeFiles are n standards files that name branch in their text
// (so that a search can tell which checkout a section came from), all
// holding the word "marker", and one file of the branch's own.
func worktreeFiles(n int, branch string) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf(".praxis-os/standards/area%d/doc%03d.md", i%7, i)] = fmt.Sprintf(
			"# Topic %d\n\nThe marker section of topic %d on %s.\n\n## Details\n\nMore about retries %d and backoff.\n", i, i, branch, i)
	}
	files[".praxis-os/standards/own.md"] = "# Own\n\nOnly the " + branch + " checkout has this file: solitary" + branch + ".\n"
	return files
}

// commonFiles are n files identical in every checkout.
func commonFiles(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf(".praxis-os/standards/common/doc%03d.md", i)] = fmt.Sprintf(
			"# Common %d\n\nShared guidance %d about logging and tracing.\n", i, i)
	}
	return files
}

// twinViews opens two views of a new shared index over worktrees of n
// files each, both on branch trunk, and returns them and their roots.
func twinViews(t testing.TB, n int) (sh *Shared, first, second *Index, firstRoot, secondRoot string) {
	t.Helper()
	db := openDB(t)
	sh = NewShared(nil)
	base := t.TempDir()
	firstRoot, secondRoot = filepath.Join(base, "main"), filepath.Join(base, "wt")
	writeFiles(t, firstRoot, worktreeFiles(n, "trunk"))
	writeFiles(t, secondRoot, worktreeFiles(n, "trunk"))
	return sh, openView(t, db, sh, "main", firstRoot), openView(t, db, sh, "wt", secondRoot), firstRoot, secondRoot
}

func openView(t testing.TB, db *store.DB, sh *Shared, id, root string) *Index {
	t.Helper()
	return openWith(t, Options{Root: root, Sources: defaultSources, DB: db, ProjectID: id, Shared: sh})
}

func TestSharedContentIndexedOnce(t *testing.T) {
	db := openDB(t)
	sh := NewShared(nil)
	base := t.TempDir()
	branches := []string{"alpha", "beta", "gamma"}
	views := map[string]*Index{}
	for _, b := range branches {
		root := filepath.Join(base, b)
		writeFiles(t, root, commonFiles(100))
		writeFiles(t, root, map[string]string{".praxis-os/standards/own.md": "# Own\n\nOnly " + b + " has solitary" + b + ".\n"})
		views[b] = openView(t, db, sh, b, root)
	}
	st := sh.Status()
	if st.Contents != 100+len(branches) || st.Views != len(branches) {
		t.Fatalf("content index holds %d contents in %d views, want %d in %d", st.Contents, st.Views, 100+len(branches), len(branches))
	}
	single := openReady(t, db, "single", filepath.Join(base, "alpha"))
	if got, want := st.Chunks, single.Status().Chunks+len(branches)-1; got != want {
		t.Fatalf("content index holds %d sections, want %d (one worktree's plus the two other own.md)", got, want)
	}
	for _, b := range branches {
		v := views[b]
		if s := v.Status(); s.Files != 101 || s.Chunks != single.Status().Chunks || s.FilesRead != 101 {
			t.Fatalf("%s: status %+v, want 101 files, %d sections, 101 files read", b, s, single.Status().Chunks)
		}
		for _, other := range branches {
			res := search(t, v, "solitary"+other)
			if want := other == b; (res.Total > 0) != want {
				t.Fatalf("%s: a search for %s's own file found %d sections, want found=%v", b, other, res.Total, want)
			}
		}
		if res := search(t, v, "tracing"); res.Total != 100 {
			t.Fatalf("%s: %d sections match a common word, want 100", b, res.Total)
		}
	}

	// A worktree equal to a sibling adds no content.
	twin := filepath.Join(base, "twin")
	writeFiles(t, twin, commonFiles(100))
	writeFiles(t, twin, map[string]string{".praxis-os/standards/own.md": "# Own\n\nOnly alpha has solitaryalpha.\n"})
	before := sh.core.snap.Load()
	tv := openView(t, db, sh, "twin", twin)
	if got := sh.Status(); got.Contents != st.Contents || got.Chunks != st.Chunks {
		t.Fatalf("a twin worktree changed the content index: %+v, was %+v", got, st)
	}
	// Its view was swapped in without copying or computing the content
	// index's tables again.
	if after := sh.core.snap.Load(); after == before || &after.postings[0] != &before.postings[0] ||
		&after.norms[0] != &before.norms[0] || &after.chunks[0] != &before.chunks[0] {
		t.Fatal("a twin worktree's attach copied the content index's sections, postings or norms")
	}
	if res := search(t, tv, "solitaryalpha"); res.Total != 1 {
		t.Fatalf("twin: found %d sections of its own file, want 1", res.Total)
	}
	// Its paths are its siblings' strings, not copies of them.
	runtime.GC()
	paths := map[string]*byte{}
	for _, f := range views["alpha"].Files() {
		paths[f.Path] = unsafe.StringData(f.Path)
	}
	for _, f := range tv.Files() {
		if p, ok := paths[f.Path]; !ok || p != unsafe.StringData(f.Path) {
			t.Fatalf("twin: path %s is not the string its sibling holds (found=%v)", f.Path, ok)
		}
	}

	// Closing views drops the content only they held.
	tv.Close()
	views["gamma"].Close()
	if got := sh.Status(); got.Contents != 100+2 || got.Views != 2 {
		t.Fatalf("after closing two views: %+v, want 102 contents in 2 views", got)
	}
	views["alpha"].Close()
	views["beta"].Close()
	if got := sh.Status(); got.Contents != 0 || got.Chunks != 0 || got.Views != 0 {
		t.Fatalf("after closing every view: %+v, want nothing", got)
	}
}

func TestSharedEditSeenInItsWorktreeOnly(t *testing.T) {
	db := openDB(t)
	sh := NewShared(nil)
	base := t.TempDir()
	roots := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	var views []*Index
	for i, root := range roots {
		writeFiles(t, root, commonFiles(20))
		views = append(views, openView(t, db, sh, fmt.Sprint("p", i), root))
	}
	before := sh.Status().Contents
	rel := ".praxis-os/standards/common/doc003.md"
	writeFiles(t, roots[1], map[string]string{rel: "# Common 3\n\nRewritten with zeppelin guidance.\n"})
	if err := views[1].Apply(context.Background(), []string{rel}); err != nil {
		t.Fatal(err)
	}
	if got := files(search(t, views[1], "zeppelin")); len(got) != 1 || got[0] != rel {
		t.Fatalf("the edited worktree finds %v, want [%s]", got, rel)
	}
	if res := search(t, views[0], "zeppelin"); res.Total != 0 {
		t.Fatalf("the other worktree sees its sibling's edit: %v", files(res))
	}
	if res := search(t, views[0], "\"Shared guidance 3\""); res.Total != 1 {
		t.Fatalf("the other worktree lost its own version: %d hits", res.Total)
	}
	if got := sh.Status().Contents; got != before+1 {
		t.Fatalf("content index holds %d contents, want %d (both versions of the file)", got, before+1)
	}
	// The edit undone: both worktrees hold one content again.
	writeFiles(t, roots[1], commonFiles(20))
	if err := views[1].Apply(context.Background(), []string{rel}); err != nil {
		t.Fatal(err)
	}
	if got := sh.Status().Contents; got != before {
		t.Fatalf("content index holds %d contents after the edit was undone, want %d", got, before)
	}
}

// branchesIn returns the branch names the hits' text names.
func branchesIn(res *Result, branches ...string) map[string]bool {
	seen := map[string]bool{}
	for _, h := range res.Results {
		for _, b := range branches {
			if strings.Contains(h.Content, " on "+b+".") {
				seen[b] = true
			}
		}
	}
	return seen
}

// TestSharedBranchSwitchIsConsistent switches every file of a worktree to
// another branch's content, delivered as several watcher batches, while
// searches run in it and in a sibling: every answer names one branch.
func TestSharedBranchSwitchIsConsistent(t *testing.T) {
	const n = 300
	_, v, sibling, main, _ := twinViews(t, n)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan []string)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		Follow(ctx, func() *Index { return v }, changes)
	}()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fails []string
	answers := map[string]int{}
	for _, ix := range []*Index{v, sibling} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := ix.Search(ctx, Query{Text: "marker section", N: 50})
				mu.Lock()
				if err != nil {
					fails = append(fails, err.Error())
					mu.Unlock()
					return
				}
				switch seen := branchesIn(res, "trunk", "topic"); {
				case len(seen) != 1 || res.Total != n:
					fails = append(fails, fmt.Sprintf("an answer of %d sections names branches %v", res.Total, seen))
				case ix == v:
					for b := range seen {
						answers[b]++
					}
				}
				mu.Unlock()
			}
		}()
	}

	// The switch: every file rewritten, delivered in batches of 50 paths
	// 50 ms apart, as a watcher delivers a long checkout.
	next := worktreeFiles(n, "topic")
	writeFiles(t, main, next)
	var paths []string
	for rel := range next {
		paths = append(paths, rel)
	}
	for i := 0; i < len(paths); i += 50 {
		changes <- paths[i:min(i+50, len(paths))]
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(20 * time.Second)
	for search(t, v, "solitarytopic").Total == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the switch was not applied within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // searches of the new checkout
	close(stop)
	wg.Wait()
	cancel()
	<-followed
	if len(fails) > 0 {
		t.Fatalf("%d inconsistent answers, first: %s", len(fails), fails[0])
	}
	if answers["trunk"] == 0 || answers["topic"] == 0 {
		t.Fatalf("answers by branch %v: want searches of both the old and the new checkout", answers)
	}
	if got := branchesIn(search(t, sibling, "marker section"), "trunk", "topic"); !got["trunk"] || len(got) != 1 {
		t.Fatalf("the sibling sees %v, want its own trunk", got)
	}
	if res := search(t, v, "solitarytrunk"); res.Total != 0 {
		t.Fatalf("the switched worktree still finds the old branch's own file: %v", files(res))
	}
}

// TestViewDropsTheProjectsOwnIndex: a project that had an index of its own
// and now shares its repository's keeps no stale copy in the store.
func TestViewDropsTheProjectsOwnIndex(t *testing.T) {
	db := openDB(t)
	root := t.TempDir()
	writeFiles(t, root, commonFiles(5))
	own := openReady(t, db, "p", root)
	own.Close()
	stored := func() bool {
		var ok bool
		if err := db.Area("p", "index").View(func(b *store.Bucket) error { ok = b.Exists(); return nil }); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !stored() {
		t.Fatal("the project's own index was not stored")
	}
	v := openView(t, db, NewShared(nil), "p", root)
	if stored() {
		t.Fatal("the project's own index is still stored while it shares its repository's")
	}
	if res := search(t, v, "tracing"); res.Total != 5 {
		t.Fatalf("the view finds %d sections, want 5", res.Total)
	}
}

// markerBranches searches v for the marker section and returns how many
// sections match and which of the branches they name.
func markerBranches(t testing.TB, v *Index, branches ...string) (int, map[string]bool) {
	t.Helper()
	res, err := v.Search(context.Background(), Query{Text: "marker section", N: 50})
	if err != nil {
		t.Fatal(err)
	}
	return res.Total, branchesIn(res, branches...)
}

// gitView opens a view of a new shared index over a worktree of n files
// on branch trunk, whose git directory is gitDir (empty yet).
func gitView(t *testing.T, n int) (root, gitDir string, v *Index) {
	base := t.TempDir()
	root, gitDir = filepath.Join(base, "wt"), filepath.Join(base, "gitdir")
	writeFiles(t, root, worktreeFiles(n, "trunk"))
	v = openWith(t, Options{Root: root, Sources: defaultSources, DB: openDB(t), ProjectID: "wt", Shared: NewShared(nil), GitDir: gitDir})
	return root, gitDir, v
}

// TestSharedCheckoutHeldWhileGitLocksItsIndex: while git's index.lock
// exists in the worktree's git directory, a checkout's batches are held
// (past the quiet period that applies without git); once the lock goes,
// the whole checkout is applied as one change, the files no batch named
// too (a walk of the sources finds them). A first batch of one file is
// held as a large one is: a checkout's first files may come alone.
func TestSharedCheckoutHeldWhileGitLocksItsIndex(t *testing.T) {
	for _, first := range []int{1, settleFrom} {
		t.Run(fmt.Sprintf("first batch of %d", first), func(t *testing.T) { testCheckoutHeld(t, first) })
	}
}

func testCheckoutHeld(t *testing.T, first int) {
	const n = 40 // every section fits in one answer
	root, gitDir, v := gitView(t, n)
	writeFiles(t, gitDir, map[string]string{"HEAD": "ref: refs/heads/trunk\n", "index.lock": ""})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan []string) // unbuffered: a send returns once the loop has taken the batch
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		Follow(ctx, func() *Index { return v }, changes)
	}()
	defer func() { cancel(); <-followed }()

	// The first files are read while git is writing them: half of each.
	next := worktreeFiles(n, "topic")
	paths := slices.Sorted(maps.Keys(next))
	half := map[string]string{}
	for _, rel := range paths[:first] {
		half[rel] = next[rel][:len(next[rel])/2]
	}
	writeFiles(t, root, half)
	changes <- paths[:first]
	// Longer than the quiet period: without the lock the first files would
	// be applied by now. The next send returns once the loop took it, so
	// it is still gathering, and nothing of the checkout may show.
	time.Sleep(2 * settleQuiet)
	changes <- []string{".praxis-os/standards/own.md"}
	if total, seen := markerBranches(t, v, "trunk", "topic"); total != n || len(seen) != 1 || !seen["trunk"] {
		t.Fatalf("while git holds index.lock: %d sections naming %v, want %d naming trunk alone", total, seen, n)
	}

	// The rest of the checkout reaches the disk, no batch names it, and
	// git lets go of its lock.
	writeFiles(t, root, next)
	if err := os.Remove(filepath.Join(gitDir, "index.lock")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		total, seen := markerBranches(t, v, "trunk", "topic")
		if len(seen) != 1 || total != n {
			t.Fatalf("an answer of %d sections names %v: a mix of checkouts", total, seen)
		}
		if seen["topic"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the checkout was not applied within 20s of git's lock going")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := search(t, v, "solitarytopic"); res.Total != 1 {
		t.Fatalf("the new branch's own file: %d sections, want 1", res.Total)
	}
	// What was read of the half-written files, staged and taken by no
	// view, is dropped: the index holds the new checkout's sections alone.
	var got SharedStatus
	if !brokertest.Poll(brokertest.WaitLimit, func() bool {
		got = v.opts.Shared.Status()
		return got.Contents == n+1 && got.Chunks == 2*n+1
	}) {
		t.Fatalf("the index holds %d contents of %d sections, want %d of %d", got.Contents, got.Chunks, n+1, 2*n+1)
	}
}

// TestSharedCheckoutJustDoneAppliedWhole: a large batch that comes after
// git wrote its index (the checkout is over, its lock gone) is applied at
// once with every file that differs from the view, not only those the
// batch names.
func TestSharedCheckoutJustDoneAppliedWhole(t *testing.T) {
	const n = 40 // every section fits in one answer
	root, gitDir, v := gitView(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		Follow(ctx, func() *Index { return v }, make(chan []string))
	}()
	cancel()
	<-followed

	next := worktreeFiles(n, "topic")
	writeFiles(t, root, next)
	writeFiles(t, gitDir, map[string]string{"index": "DIRC"})
	paths := slices.Sorted(maps.Keys(next))
	changes := make(chan []string, 1)
	changes <- paths[:settleFrom]
	close(changes) // the loop ends once it has applied the batch
	Follow(context.Background(), func() *Index { return v }, changes)
	if total, seen := markerBranches(t, v, "trunk", "topic"); total != n || len(seen) != 1 || !seen["topic"] {
		t.Fatalf("after a batch of %d of %d changed files: %d sections naming %v, want %d naming topic alone", settleFrom, n, total, seen, n)
	}
}

// TestSharedEditWithSameSizeAndMtimeSeen: a view reads every path a batch
// names, whatever its size and mtime say: an edit that keeps both (a
// write within the same mtime tick, a tool restoring the time) is seen,
// in a batch of one file and in a checkout-sized batch.
func TestSharedEditWithSameSizeAndMtimeSeen(t *testing.T) {
	const n = 40
	root, _, v := gitView(t, n)
	paths := slices.Sorted(maps.Keys(worktreeFiles(n, "trunk")))
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan []string)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		Follow(ctx, func() *Index { return v }, changes)
	}()
	defer func() { cancel(); <-followed }()
	for round, batch := range [][]string{paths[:1], paths[:settleFrom]} {
		word := fmt.Sprintf("zebraq%d", round) // as long as "# Topic", which it replaces
		for _, rel := range batch {
			editKeepingStat(t, filepath.Join(root, filepath.FromSlash(rel)), word)
		}
		changes <- batch
		deadline := time.Now().Add(20 * time.Second)
		for got := 0; got != len(batch); got = search(t, v, word).Total {
			if time.Now().After(deadline) {
				t.Fatalf("20s after an edit keeping size and mtime of %d files: %d sections hold %q, want %d", len(batch), got, word, len(batch))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// editKeepingStat overwrites the start of the file at p with word, keeping
// its size and modification time (a write within the same mtime tick, a
// tool restoring the time).
func editKeepingStat(t *testing.T, p, word string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	copy(data, word)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, err := os.Stat(p); err != nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the edit changed the size or mtime of %s (%v)", p, err)
	}
}

// TestHeldOnlySplitsUnreadUpdates: an unread update whose content no view
// holds is to be read, every other update is kept in order; with nothing
// to read the updates come back as they were.
func TestHeldOnlySplitsUnreadUpdates(t *testing.T) {
	sh := NewShared(nil)
	held, gone := [16]byte{1}, [16]byte{2}
	sh.refs[contentKey("a.md", held)] = 1
	ups := []fileUpdate{
		{rel: "a.md", entry: &fileEntry{hash: held}, unread: true},
		{rel: "b.md", entry: &fileEntry{hash: gone}, unread: true},
		{rel: "c.md"}, // removed
		{rel: "d.md", entry: &fileEntry{hash: gone}}, // read
		{rel: "e.md", entry: &fileEntry{hash: held, skip: "too large"}, unread: true},
	}
	kept, reread := sh.heldOnly(ups)
	var names []string
	for _, u := range kept {
		names = append(names, u.rel)
	}
	if strings.Join(names, " ") != "a.md c.md d.md" || strings.Join(reread, " ") != "b.md e.md" {
		t.Fatalf("kept %v, reread %v", names, reread)
	}
	all := []fileUpdate{ups[0], ups[2], ups[3]}
	kept, reread = sh.heldOnly(all)
	if len(reread) != 0 || len(kept) != 3 || &kept[0] != &all[0] {
		t.Fatalf("with every content held: kept %d (a copy: %v), reread %v", len(kept), len(kept) > 0 && &kept[0] != &all[0], reread)
	}
}
