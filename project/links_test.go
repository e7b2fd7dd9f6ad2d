package project

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/store/storetest"
)

// TestEngineFollowsAllowedLinksOnly: the project's rag.allow_outside
// (relative to the root) and the broker's (Options.AllowOutside) both let
// indexing follow links; a link anywhere else is reported in the index
// status, and an edit of an allowed target is picked up.
func TestEngineFollowsAllowedLinksOnly(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "project")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".praxis-os/config.yaml"), "rag:\n  allow_outside: [../team]\n")
	write(filepath.Join(base, "team/t.md"), "# Team\n\nOcelot.\n")
	write(filepath.Join(base, "company/c.md"), "# Company\n\nPangolin.\n")
	write(filepath.Join(base, "private/p.md"), "# Private\n\nQuoll.\n")
	if err := os.MkdirAll(filepath.Join(root, ".praxis-os/standards"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"t.md": "team/t.md", "c.md": "company/c.md", "p.md": "private/p.md"} {
		if err := os.Symlink(filepath.Join(base, target), filepath.Join(root, ".praxis-os/standards", name)); err != nil {
			t.Fatal(err)
		}
	}
	db := storetest.Open(t, "")
	e, err := Open(context.Background(), Options{Root: root, ID: "p-1", DB: db, AllowOutside: []string{filepath.Join(base, "company")}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	find := func(q string) []string {
		t.Helper()
		res, err := e.Search(context.Background(), search.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Results {
			out = append(out, r.File)
		}
		slices.Sort(out)
		return out
	}
	if got := find("ocelot pangolin quoll"); !slices.Equal(got, []string{".praxis-os/standards/c.md", ".praxis-os/standards/t.md"}) {
		t.Fatalf("indexed %v, want the team and company links only", got)
	}
	st, _ := e.IndexStatus()
	if len(st.Warnings) != 1 || !strings.HasPrefix(st.Warnings[0], ".praxis-os/standards/p.md is not indexed") {
		t.Fatalf("warnings %q", st.Warnings)
	}
	write(filepath.Join(base, "team/t.md"), "# Team\n\nWallaby.\n")
	brokertest.Eventually(t, "the edit of an allowed target is picked up", func() bool {
		return slices.Equal(find("wallaby"), []string{".praxis-os/standards/t.md"})
	})
}
