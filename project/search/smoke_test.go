package search

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".praxis-os/standards/a.md": "# Closing files\n\nAlways close the file handle.\n\n## Copies\n\nMake copies of snake_case data.\n",
		".praxis-os/standards/b.md": "# Other\n\nNothing here about it.\n",
	})
	db := openDB(t)
	ix := openReady(t, db, "p1", root)
	for _, q := range []string{"closing", "copy", "snake", "snake_case", `"close the file"`} {
		res := search(t, ix, q)
		t.Logf("%s: %+v", q, res)
	}
	t.Logf("%+v", ix.Status())
	ix.Close()
	ix2 := openReady(t, db, "p1", root)
	t.Logf("%+v", ix2.Status())
	t.Logf("%+v", search(t, ix2, "copy"))
}
