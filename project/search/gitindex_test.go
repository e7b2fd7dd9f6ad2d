package search

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// gitWorktrees makes a repository of files committed on main and a linked
// worktree "wt" of it, and returns both roots and their git directories.
// Their indexes are dated a second ahead, as if git had written them again
// since: no entry is racily clean, so that git's index vouches for every
// file the checkout wrote.
func gitWorktrees(t testing.TB, files map[string]string) (repo, repoGit, wt, wtGit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	repo, wt = filepath.Join(base, "repo"), filepath.Join(base, "wt")
	writeFiles(t, repo, files)
	brokertest.Git(t, repo, "init", "-q", "-b", "main")
	brokertest.Git(t, repo, "add", "-A")
	brokertest.Git(t, repo, "commit", "-q", "-m", "first")
	brokertest.Git(t, repo, "worktree", "add", "-q", "-b", "wt", wt)
	repoGit, wtGit = filepath.Join(repo, ".git"), filepath.Join(repo, ".git", "worktrees", "wt")
	later := time.Now().Add(time.Second)
	for _, dir := range []string{repoGit, wtGit} {
		if err := os.Chtimes(filepath.Join(dir, "index"), later, later); err != nil {
			t.Fatal(err)
		}
	}
	return repo, repoGit, wt, wtGit
}

// TestViewTakesWhatGitsIndexVouchesFor: a worktree whose files equal a
// sibling's is indexed from a walk of its files and its git index, reading
// none of them; a file edited since git wrote it (same size and mtime, so
// only its change time and content differ) is read, and its edit is seen
// in that worktree alone.
func TestViewTakesWhatGitsIndexVouchesFor(t *testing.T) {
	const n = 40
	repo, repoGit, wt, wtGit := gitWorktrees(t, worktreeFiles(n, "trunk"))
	rel := ".praxis-os/standards/area3/doc003.md"
	editKeepingStat(t, filepath.Join(wt, filepath.FromSlash(rel)), "# Zeppo") // as long as "# Topic", which it replaces

	db, sh := openDB(t), NewShared(nil)
	main := openWith(t, Options{Root: repo, Sources: defaultSources, DB: db, ProjectID: "main", Shared: sh, GitDir: repoGit})
	if got := main.Status().FilesRead; got != n+1 {
		t.Fatalf("the first worktree read %d files, want %d", got, n+1)
	}
	v := openWith(t, Options{Root: wt, Sources: defaultSources, DB: db, ProjectID: "wt", Shared: sh, GitDir: wtGit})
	if got := v.Status().FilesRead; got != 1 {
		t.Fatalf("the sibling read %d files, want 1 (the file edited since git wrote it)", got)
	}
	for _, ix := range []*Index{main, v} {
		if res := search(t, ix, "marker"); res.Total != n {
			t.Fatalf("%d sections hold the marker, want %d", res.Total, n)
		}
	}
	if got := files(search(t, v, "zeppo")); len(got) == 0 || slices.ContainsFunc(got, func(f string) bool { return f != rel }) {
		t.Fatalf("the sibling's edit found in %v, want %s alone", got, rel)
	}
	if got := search(t, main, "zeppo").Total; got != 0 {
		t.Fatalf("the first worktree sees its sibling's edit: %d sections", got)
	}
	if got := sh.Status().Contents; got != n+2 {
		t.Fatalf("%d contents indexed, want %d (the edited file's two versions)", got, n+2)
	}
}

// TestViewReadsWhatWasDroppedMeanwhile: an update taken from git's index
// without reading the file, whose content no view holds any more when it
// is committed, is read then and indexed.
func TestViewReadsWhatWasDroppedMeanwhile(t *testing.T) {
	const n = 10
	_, _, wt, wtGit := gitWorktrees(t, worktreeFiles(n, "trunk"))
	v := openWith(t, Options{Root: wt, Sources: defaultSources, DB: openDB(t), ProjectID: "wt", Shared: NewShared(nil), GitDir: wtGit})
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	disk, err := v.scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := slices.Sorted(maps.Keys(disk))
	ups := v.vouched(paths, disk, v.gitIndex(), false)
	for _, u := range ups {
		if !u.unread {
			t.Fatalf("%s was read: git's index vouches for it and the view holds its content", u.rel)
		}
	}
	var drop []fileUpdate
	for _, rel := range paths {
		drop = append(drop, fileUpdate{rel: rel, reindex: true})
	}
	if _, err := v.opts.Shared.commitView(v, drop); err != nil {
		t.Fatal(err)
	}
	if st := v.opts.Shared.Status(); st.Contents != 0 {
		t.Fatalf("%d contents left after the view dropped every file", st.Contents)
	}
	if err := v.commitUnread(ups); err != nil {
		t.Fatal(err)
	}
	if res := search(t, v, "marker"); res.Total != n {
		t.Fatalf("%d sections hold the marker, want %d", res.Total, n)
	}
}

// TestCheckoutTakesWhatGitsIndexVouchesFor: a git checkout in a worktree,
// once git's index is written, reads only the files whose content no
// sibling read: a switch to a branch no sibling has reads every file, the
// switch back to the siblings' content reads none.
func TestCheckoutTakesWhatGitsIndexVouchesFor(t *testing.T) {
	const n = 40
	repo, repoGit, wt, wtGit := gitWorktrees(t, worktreeFiles(n, "trunk"))
	writeFiles(t, wt, worktreeFiles(n, "topic"))
	brokertest.Git(t, wt, "checkout", "-q", "-b", "topic")
	// The files were rewritten at their size within the second git wrote
	// its index, whose mtime gitWorktrees moved ahead: git's stat check
	// would take them as unchanged, so they are hashed again to stage them.
	brokertest.Git(t, wt, "add", "--renormalize", ".")
	brokertest.Git(t, wt, "commit", "-q", "-m", "topic")
	brokertest.Git(t, wt, "checkout", "-q", "wt")

	db, sh := openDB(t), NewShared(nil)
	openWith(t, Options{Root: repo, Sources: defaultSources, DB: db, ProjectID: "main", Shared: sh, GitDir: repoGit})
	v := openWith(t, Options{Root: wt, Sources: defaultSources, DB: db, ProjectID: "wt", Shared: sh, GitDir: wtGit})
	paths := slices.Sorted(maps.Keys(worktreeFiles(n, "topic")))
	for _, step := range []struct {
		branch string
		reads  int64
	}{{"topic", int64(len(paths))}, {"wt", 0}} {
		before := v.Status().FilesRead
		brokertest.Git(t, wt, "checkout", "-q", step.branch)
		// Dated ahead as git would date an index written a second later:
		// no file is racily clean. The batch names every file, and git's
		// index was just written: the checkout is over.
		later := time.Now().Add(time.Second)
		if err := os.Chtimes(filepath.Join(wtGit, "index"), later, later); err != nil {
			t.Fatal(err)
		}
		changes := make(chan []string, 1)
		changes <- paths
		close(changes)
		Follow(context.Background(), func() *Index { return v }, changes)
		if got := v.Status().FilesRead - before; got != step.reads {
			t.Fatalf("the checkout of %s read %d files, want %d", step.branch, got, step.reads)
		}
		word := map[string]string{"topic": "solitarytopic", "wt": "solitarytrunk"}[step.branch]
		if res := search(t, v, word); res.Total != 1 {
			t.Fatalf("after the checkout of %s: %d sections hold %s, want 1", step.branch, res.Total, word)
		}
		if res := search(t, v, "marker"); res.Total != n {
			t.Fatalf("after the checkout of %s: %d sections hold the marker, want %d", step.branch, res.Total, n)
		}
	}
}

// encodeGitIndex writes entries (path -> blob id, in path order) as git
// writes an index of format version, for the parser's tests.
func encodeGitIndex(version uint32, entries map[string]byte) []byte {
	var b []byte
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	prev := ""
	for i, rel := range slices.Sorted(maps.Keys(entries)) {
		start := len(b)
		for _, v := range []uint32{1, 2, 3, 4, 0, uint32(100 + i), 0o100644, 0, 0, 5} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		var id [sha1.Size]byte
		id[0] = entries[rel]
		b = append(b, id[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(rel), 0xfff)))
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(rel) && prev[common] == rel[common] {
				common++
			}
			b = binary.AppendUvarint(b, uint64(len(prev)-common))
			b = append(b, rel[common:]...)
			b = append(b, 0)
		} else {
			b = append(b, rel...)
			b = append(b, 0)
			for (len(b)-start)%8 != 0 {
				b = append(b, 0)
			}
		}
		prev = rel
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// TestParseGitIndex reads the entries of formats 2 and 4 back, and refuses
// a damaged index.
func TestParseGitIndex(t *testing.T) {
	entries := map[string]byte{"a.md": 1, ".praxis-os/standards/x.md": 2, ".praxis-os/standards/xy.md": 3, ".praxis-os/workflows/w.md": 4}
	for _, version := range []uint32{2, 4} {
		data := encodeGitIndex(version, entries)
		got, err := parseGitIndex(data, func(string) bool { return true })
		if err != nil {
			t.Fatalf("format %d: %v", version, err)
		}
		if len(got) != len(entries) {
			t.Fatalf("format %d: %d entries, want %d", version, len(got), len(entries))
		}
		for rel, id := range entries {
			if e, ok := got[rel]; !ok || e.blob[0] != id || e.size != 5 || e.mtimeS != 3 {
				t.Fatalf("format %d: %s read as %+v (%v)", version, rel, e, ok)
			}
		}
		data[len(data)/2] ^= 1
		if _, err := parseGitIndex(data, func(string) bool { return true }); err == nil {
			t.Fatalf("format %d: a damaged index was read", version)
		}
	}
}

// FuzzGitIndex: any bytes, with a checksum that holds (so that the
// entries are parsed), give entries or an error, never a panic, and never
// more entries than the header counts.
func FuzzGitIndex(f *testing.F) {
	entries := map[string]byte{"a.md": 1, "b/c.md": 2, "b/cd.md": 3}
	for _, version := range []uint32{2, 3, 4} {
		data := encodeGitIndex(version, entries)
		f.Add(data[:len(data)-sha1.Size])
	}
	f.Add([]byte("DIRC"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha1.Sum(body)
		data := append(slices.Clip(body), sum[:]...)
		got, err := parseGitIndex(data, func(string) bool { return true })
		if err != nil {
			return
		}
		if len(data) < 12 || uint32(len(got)) > binary.BigEndian.Uint32(data[8:12]) {
			t.Fatalf("%d entries from a header counting fewer", len(got))
		}
	})
}

// TestCheckoutRereadsWhatChangedAfterItWasStaged: the files a checkout
// staged while git wrote them are taken as read when git's new index
// vouches for them with the blob read; one rewritten after it was read
// (git wrote it again: its blob read differs from the index's) is read
// again, and the content read first, which no view took, is never
// indexed and is forgotten.
func TestCheckoutRereadsWhatChangedAfterItWasStaged(t *testing.T) {
	const n = 40
	repo, repoGit, wt, wtGit := gitWorktrees(t, worktreeFiles(n, "trunk"))
	writeFiles(t, wt, worktreeFiles(n, "topic"))
	brokertest.Git(t, wt, "checkout", "-q", "-b", "topic")
	brokertest.Git(t, wt, "add", "--renormalize", ".") // see TestCheckoutTakesWhatGitsIndexVouchesFor
	brokertest.Git(t, wt, "commit", "-q", "-m", "topic")
	brokertest.Git(t, wt, "checkout", "-q", "wt")

	db, sh := openDB(t), NewShared(nil)
	openWith(t, Options{Root: repo, Sources: defaultSources, DB: db, ProjectID: "main", Shared: sh, GitDir: repoGit})
	v := openWith(t, Options{Root: wt, Sources: defaultSources, DB: db, ProjectID: "wt", Shared: sh, GitDir: wtGit})
	trunk := sh.Status().Chunks
	paths := slices.Sorted(maps.Keys(worktreeFiles(n, "topic")))

	// The checkout, with one file read while git was writing it: what was
	// read of it is a half-written section no checkout holds.
	brokertest.Git(t, wt, "checkout", "-q", "topic")
	rel := ".praxis-os/standards/area3/doc003.md"
	p := filepath.Join(wt, filepath.FromSlash(rel))
	final, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt, map[string]string{rel: "# Topic 3\n\nHalfwritten zanzibar"})
	st := &staged{}
	v.stage(st, paths)
	if got := search(t, v, "zanzibar").Total; got != 0 {
		t.Fatalf("a staged section is searched before the checkout is applied: %d sections", got)
	}
	// The new content is read and analysed as it comes, and added to the
	// index with the view's change.
	sh.core.writeMu.Lock()
	pending := len(sh.pending)
	sh.core.writeMu.Unlock()
	if got := sh.Status().Chunks; got != trunk || pending != n+1 {
		t.Fatalf("%d sections indexed and %d contents pending after staging, want %d and %d", got, pending, trunk, n+1)
	}
	// Git writes the file whole and records it in its index.
	if err := os.WriteFile(p, final, 0o644); err != nil {
		t.Fatal(err)
	}
	brokertest.Git(t, wt, "add", rel)
	later := time.Now().Add(time.Second) // no file racily clean, as in gitWorktrees
	if err := os.Chtimes(filepath.Join(wtGit, "index"), later, later); err != nil {
		t.Fatal(err)
	}

	before := v.Status().FilesRead
	v.writeMu.Lock()
	disk, err := v.scan(context.Background())
	v.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.apply(context.Background(), paths, disk, st); err != nil {
		t.Fatal(err)
	}
	v.unstage(st)
	if got := v.Status().FilesRead - before; got != 1 {
		t.Fatalf("the checkout read %d files once git was done, want 1 (the file rewritten after it was read)", got)
	}
	if res := search(t, v, "solitarytopic"); res.Total != 1 {
		t.Fatalf("%d sections hold solitarytopic, want 1", res.Total)
	}
	if res := search(t, v, "marker"); res.Total != n || len(branchesIn(res, "trunk", "topic")) != 1 || !branchesIn(res, "topic")["topic"] {
		t.Fatalf("%d sections hold the marker, naming %v; want %d naming topic", res.Total, branchesIn(res, "trunk", "topic"), n)
	}
	if got := search(t, v, "zanzibar").Total; got != 0 {
		t.Fatalf("the half-written read is searched: %d sections", got)
	}
	// Trunk's sections (the sibling's) and topic's own (its first section
	// of each file and its own file; each "Details" section is trunk's):
	// the half-written read's are gone, held by no view.
	if got, want := sh.Status().Chunks, trunk+n+1; got != want {
		t.Fatalf("%d sections indexed, want %d: the content staged and not taken is dropped", got, want)
	}
	sh.core.writeMu.Lock()
	pending = len(sh.pending)
	sh.core.writeMu.Unlock()
	if pending != 0 {
		t.Fatalf("%d contents still pending once the checkout is applied", pending)
	}
}

// TestLongCheckoutIndexedWhileGitWrites: once a checkout's staged content
// holds flushFrom sections, it is indexed while git writes the rest, held
// by no view: searches still answer from the old checkout. The view's
// change takes it without indexing it again; a checkout staged and not
// applied leaves nothing behind.
func TestLongCheckoutIndexedWhileGitWrites(t *testing.T) {
	const n = flushFrom/2 + 10 // two sections a file, one of them as on trunk
	sh, _, v, _, wt := twinViews(t, n)
	trunk := sh.Status().Chunks
	pending := func() (contents, chunks int) {
		sh.core.writeMu.Lock()
		defer sh.core.writeMu.Unlock()
		return len(sh.pending), sh.pendingChunks
	}
	paths := slices.Sorted(maps.Keys(worktreeFiles(n, "topic")))
	for i, branch := range []string{"topic", "other"} {
		writeFiles(t, wt, worktreeFiles(n, branch))
		st := &staged{}
		v.stage(st, paths[:n/2])
		if contents, chunks := pending(); contents != n/2 || chunks != n {
			t.Fatalf("%s: %d contents of %d sections pending after half the files, want %d of %d", branch, contents, chunks, n/2, n)
		}
		v.stage(st, paths[n/2:])
		if contents, _ := pending(); contents != 0 {
			t.Fatalf("%s: %d contents pending past %d sections, want all indexed", branch, contents, flushFrom)
		}
		// Each file's "Details" section is trunk's: the first ones and the
		// branch's own file are new (and topic's are held by v when other
		// is staged).
		if got, want := sh.Status().Chunks, trunk+(i+1)*(n+1); got != want {
			t.Fatalf("%s: %d sections indexed while git writes, want %d", branch, got, want)
		}
		current := []string{"trunk", "topic"}[i] // the view's checkout
		if total, seen := markerBranches(t, v, current, branch); total != n || len(seen) != 1 || !seen[current] {
			t.Fatalf("%s: %d sections naming %v while git writes, want %s's alone", branch, total, seen, current)
		}
		if branch == "topic" {
			before := sh.Status().Chunks
			if err := v.apply(context.Background(), paths, nil, st); err != nil {
				t.Fatal(err)
			}
			v.unstage(st)
			if total, seen := markerBranches(t, v, "trunk", branch); total != n || len(seen) != 1 || !seen[branch] {
				t.Fatalf("after the checkout of %s: %d sections naming %v", branch, total, seen)
			}
			if got := sh.Status().Chunks; got != before {
				t.Fatalf("the checkout's change indexed %d sections, want none: all were indexed while git wrote", got-before)
			}
			checkPostingsMatchTexts(t, sh.core)
			continue
		}
		// A checkout staged and never applied (git failed, say).
		v.unstage(st)
		if got, want := sh.Status().Chunks, trunk+n+1; got != want {
			t.Fatalf("%d sections indexed once the unapplied checkout is released, want %d (trunk's and topic's)", got, want)
		}
	}
}
