package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// branchFiles are n small standards files, each naming branch in its text,
// so that a search can tell which checkout a section came from.
func branchFiles(n int, branch string) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf(".praxis-os/standards/area%d/doc%04d.md", i%20, i)] = fmt.Sprintf(
			"# Topic %d\n\nThe marker section of topic %d on %s.\n", i, i, branch)
	}
	return files
}

// contentHit is a search hit with its text.
type contentHit struct {
	File    string `json:"file"`
	Content string `json:"content"`
}

// searchContent calls search_standards and returns the hits with their
// text and the number of sections that matched.
func searchContent(ctx context.Context, s *mcp.ClientSession, q string, n int) ([]contentHit, int, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": q, "n_results": n}})
	if err != nil {
		return nil, 0, err
	}
	if res.IsError {
		return nil, 0, fmt.Errorf("search %q: %s", q, brokertest.ResultText(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Results []contentHit
		Total   int
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, 0, err
	}
	return out.Results, out.Total, nil
}

// TestWorktreesShareOneIndex: 8 worktrees of one repository (2,000
// standards files, one file of each branch's own) are each served on their
// own port, grouped under the repository with their branches; a search in
// each sees its own branch's content; an edit in one is seen there only; a
// checkout of a branch that changes all 2,000 files, while searches run,
// answers every one from one checkout, the old or the new, with no rebuild.
func TestWorktreesShareOneIndex(t *testing.T) {
	t.Parallel()
	const n = 2000
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// The history is written as one pack by git fast-import: 4,000
	// loose objects from git add and commit cost more CPU than the rest
	// of the test, and every checkout below reads its files from it.
	repo := brokertest.Project(t, "repo", nil)
	brokertest.Git(t, repo, "init", "-q", "-b", "main")
	branches := []gitBranch{{name: "main", files: branchFiles(n, "trunk")}, {name: "topic", from: "main", files: branchFiles(n, "topic")}}
	for i := 1; i < 8; i++ {
		branches = append(branches, gitBranch{name: fmt.Sprintf("wt%d", i), from: "main", files: map[string]string{
			".praxis-os/standards/own.md": fmt.Sprintf("# Own\n\nOnly branch wt%d has solitarywt%d.\n", i, i)}})
	}
	gitImport(t, repo, branches)
	brokertest.Git(t, repo, "checkout", "-q", "-f", "main")

	roots := []string{repo}
	for i := 1; i < 8; i++ {
		name := fmt.Sprintf("wt%d", i)
		wt := filepath.Join(filepath.Dir(repo), name)
		brokertest.Git(t, repo, "worktree", "add", "-q", wt, name)
		roots = append(roots, wt)
	}

	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 3*time.Minute)
	sessions := make([]*mcp.ClientSession, len(roots))
	ports := map[int]bool{}
	for i, root := range roots {
		resp := b.Attach(t, root)
		if ports[resp.Port] || resp.Port == 0 {
			t.Fatalf("%s got port %d, already taken", root, resp.Port)
		}
		ports[resp.Port] = true
		sessions[i] = connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL})
		// Indexed before the next attaches.
		if _, total, err := searchContent(ctx, sessions[i], "marker section", 1); err != nil || total != n {
			t.Fatalf("%s: a search of every file found %d sections (%v), want %d", root, total, err, n)
		}
	}

	l, ok := projectsJSON(t, b.Home)
	if !ok || len(l.Repositories) != 1 || len(l.Repositories[0].Projects) != 8 {
		t.Fatalf("berth projects --json: repositories %+v", l.Repositories)
	}
	for i, root := range roots {
		p, _ := projectByRoot(l, root)
		want := "main"
		if i > 0 {
			want = fmt.Sprintf("wt%d", i)
		}
		if p.Repository == nil || p.Repository.Branch != want {
			t.Fatalf("%s: repository %+v, want branch %s", root, p.Repository, want)
		}
	}

	// Each sees its own branch's file, none a sibling's.
	for i, s := range sessions {
		for j := 1; j < 8; j++ {
			_, total, err := searchContent(ctx, s, fmt.Sprintf("solitarywt%d", j), 5)
			if err != nil {
				t.Fatal(err)
			}
			if want := i == j; (total > 0) != want {
				t.Fatalf("%s: a search for wt%d's own file found %d sections", roots[i], j, total)
			}
		}
	}

	// An edit in wt3 is seen there only.
	writeTree(t, roots[3], map[string]string{".praxis-os/standards/area5/doc0005.md": "# Topic 5\n\nRewritten with zeppelin guidance.\n"})
	brokertest.Eventually(t, "wt3's edit in its search", func() bool {
		_, total, err := searchContent(ctx, sessions[3], "zeppelin", 5)
		return err == nil && total == 1
	})
	for i, s := range sessions {
		if i == 3 {
			continue
		}
		if _, total, err := searchContent(ctx, s, "zeppelin", 5); err != nil || total != 0 {
			t.Fatalf("%s sees wt3's edit: %d sections (%v)", roots[i], total, err)
		}
	}

	// A checkout of all 2,000 files in wt7 while searches run there.
	switched := sessions[7]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fails []string
	seen := map[string]int{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 10000 {
			select {
			case <-stop:
				return
			default:
			}
			hits, total, err := searchContent(ctx, switched, "marker section", 50)
			branches := map[string]bool{}
			for _, h := range hits {
				for _, br := range []string{"trunk", "topic"} {
					if strings.Contains(h.Content, " on "+br+".") {
						branches[br] = true
					}
				}
			}
			mu.Lock()
			switch {
			case err != nil:
				fails = append(fails, err.Error())
			case len(branches) != 1 || total != n:
				fails = append(fails, fmt.Sprintf("an answer of %d sections names branches %v", total, branches))
			default:
				for br := range branches {
					seen[br]++
				}
			}
			mu.Unlock()
		}
	}()
	brokertest.Eventually(t, "searches of the old checkout", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["trunk"] > 0
	})
	brokertest.Git(t, roots[7], "checkout", "-q", "topic")
	brokertest.Eventually(t, "wt7's search answers from the topic checkout", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["topic"] > 0
	})
	close(stop)
	wg.Wait()
	if len(fails) > 0 {
		t.Fatalf("%d answers during the checkout were not from one checkout; first: %s", len(fails), fails[0])
	}
	if _, total, err := searchContent(ctx, switched, "solitarywt7", 5); err != nil || total != 0 {
		t.Fatalf("after the checkout wt7 still finds its old branch's file: %d (%v)", total, err)
	}
	if hits, _, err := searchContent(ctx, sessions[6], "marker section", 50); err != nil || !strings.Contains(hits[0].Content, " on trunk.") {
		t.Fatalf("wt6 no longer answers from its own checkout: %v (%v)", hits, err)
	}
	if log := b.Stderr(); strings.Contains(log, "rebuild") {
		t.Fatalf("the broker rebuilt an index:\n%s", log)
	}
}

// gitBranch is a branch for gitImport: its files (path -> content) over
// those of the branch from, or alone when from is empty.
type gitBranch struct {
	name, from string
	files      map[string]string
}

// gitImport commits each branch in repo, in order, with git fast-import.
func gitImport(t *testing.T, repo string, branches []gitBranch) {
	t.Helper()
	var b strings.Builder
	for _, br := range branches {
		fmt.Fprintf(&b, "commit refs/heads/%s\ncommitter berth <berth@example.com> 1700000000 +0000\ndata 0\n", br.name)
		if br.from != "" {
			fmt.Fprintf(&b, "from refs/heads/%s\n", br.from)
		}
		for _, rel := range slices.Sorted(maps.Keys(br.files)) {
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", rel, len(br.files[rel]), br.files[rel])
		}
		b.WriteString("\n")
	}
	brokertest.GitInput(t, repo, b.String(), "fast-import", "--quiet")
}

// writeTree writes files (path relative to root -> content).
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(rel)), content)
	}
}
