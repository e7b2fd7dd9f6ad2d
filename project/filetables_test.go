package project

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// heldTable is the table e's catalog serves its files from now.
func heldTable(e *Engine) *fileTable {
	c := e.current().catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files
}

// Two projects holding the same files (as sibling worktrees do) serve them
// from one table; a project whose files differ keeps its own, and an edit
// gives a project a table of its own again.
func TestEqualCatalogsShareTheirTable(t *testing.T) {
	roots := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for i, root := range roots {
		std := filepath.Join(root, ".praxis-os", "standards")
		writeFile(t, filepath.Join(std, "a.md"), "# Alpha\n\nFirst.\n")
		writeFile(t, filepath.Join(std, "b.md"), "# Bravo\n\nSecond.\n")
		if i == 2 {
			writeFile(t, filepath.Join(std, "c.md"), "# Charlie\n\nThird.\n")
		}
	}
	var es []*Engine
	for _, root := range roots {
		e := openEngine(t, root)
		brokertest.Eventually(t, "the catalog's table", func() bool { return heldTable(e) != nil && len(heldTable(e).files) > 0 })
		es = append(es, e)
	}
	a, b, c := heldTable(es[0]), heldTable(es[1]), heldTable(es[2])
	if a != b {
		t.Fatalf("equal projects hold two tables: %v and %v", a.files, b.files)
	}
	if len(a.files) != 2 || a.files[0].path != ".praxis-os/standards/a.md" || a.files[0].title != "Alpha" {
		t.Fatalf("shared table: %+v", a.files)
	}
	if c == a || len(c.files) != 3 {
		t.Fatalf("a project with another file shares the table: %+v", c.files)
	}

	writeFile(t, filepath.Join(roots[1], ".praxis-os", "standards", "b.md"), "# Bravo\n\nSecond, edited.\n")
	brokertest.Eventually(t, "the edited project's own table", func() bool { return heldTable(es[1]) != a })
	if got := heldTable(es[1]); len(got.files) != 2 || got.files[1].hash == a.files[1].hash {
		t.Fatalf("edited project's table: %+v", got.files)
	}
	if heldTable(es[0]) != a {
		t.Fatal("the unedited project's table changed")
	}
}

// A table no catalog holds leaves the cache.
func TestUnheldTablesAreForgotten(t *testing.T) {
	tc := tableCache{byDigest: map[uint64]weakTable{}}
	files := []fileEntry{{path: "x.md", title: "X", size: 3}}
	t1 := tc.intern(files)
	if t2 := tc.intern([]fileEntry{{path: "x.md", title: "X", size: 3}}); t2 != t1 {
		t.Fatal("equal tables not shared")
	}
	if t3 := tc.intern([]fileEntry{{path: "x.md", title: "X", size: 4}}); t3 == t1 {
		t.Fatal("tables of other sizes shared")
	}
	// t1 is not used below: nothing holds the first table any more.
	brokertest.Eventually(t, "the cache emptied", func() bool {
		runtime.GC()
		tc.mu.Lock()
		defer tc.mu.Unlock()
		return len(tc.byDigest) == 0
	})
}
