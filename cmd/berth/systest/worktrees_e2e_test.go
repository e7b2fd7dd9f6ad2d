package systest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// projectsJSON is `berth projects --json`.
func projectsJSON(t *testing.T, home string) (api.ProjectList, bool) {
	var l api.ProjectList
	out, code := berthCmd(t, home, "projects", "--json")
	return l, code == 0 && json.Unmarshal([]byte(out), &l) == nil
}

func projectByRoot(l api.ProjectList, root string) (api.Project, bool) {
	for _, p := range l.Projects {
		if p.Root == root {
			return p, true
		}
	}
	return api.Project{}, false
}

// TestWorktreesGroupUnderTheirRepository: a repository's main checkout and
// its linked worktrees are each served on their own port and listed under
// one repository with their branches, kept current across a checkout; a
// checkout whose .git file claims the repository without its confirmation
// is a project of its own, and the log says why.
func TestWorktreesGroupUnderTheirRepository(t *testing.T) {
	t.Parallel()
	repo := brokertest.GitRepo(t, "repo", map[string]string{".praxis-os/standards/a.md": "# A\n\nalpha\n"})
	wtA := brokertest.Worktree(t, repo, "wt-a")
	wtB := brokertest.Worktree(t, repo, "wt-b")
	brokertest.Git(t, wtB, "checkout", "-q", "--detach")
	// A clone that names wt-a's admin folder in its .git file to join the
	// repository: the admin folder's gitdir does not point back to it.
	forged := brokertest.Project(t, "forged", map[string]string{".praxis-os/standards/f.md": "# F\n",
		".git": "gitdir: " + filepath.Join(repo, ".git", "worktrees", "wt-a") + "\n"})

	b := brokertest.StartBroker(t, brokertest.Options{})
	ports := map[int]string{}
	for _, root := range []string{repo, wtA, wtB, forged} {
		resp := b.Attach(t, root)
		if other, dup := ports[resp.Port]; dup || resp.Port == 0 {
			t.Fatalf("%s got port %d, already %q's", root, resp.Port, other)
		}
		ports[resp.Port] = root
	}

	l, ok := projectsJSON(t, b.Home)
	if !ok || len(l.Projects) != 4 {
		t.Fatalf("berth projects --json: %+v", l)
	}
	if len(l.Repositories) != 1 || len(l.Repositories[0].Projects) != 3 || l.Repositories[0].Name != "repo" {
		t.Fatalf("repositories: %+v", l.Repositories)
	}
	head := brokertest.Git(t, repo, "rev-parse", "HEAD")
	for root, want := range map[string]api.Repository{
		repo: {Branch: "main", Commit: head},
		wtA:  {Worktree: "wt-a", Branch: "wt-a", Commit: head},
		wtB:  {Worktree: "wt-b", Commit: head},
	} {
		p, _ := projectByRoot(l, root)
		r := p.Repository
		if r == nil || r.ID != l.Repositories[0].ID || r.Worktree != want.Worktree || r.Branch != want.Branch || r.Commit != want.Commit {
			t.Errorf("%s: repository %+v, want %+v", root, r, want)
		}
	}
	if p, _ := projectByRoot(l, forged); p.Repository != nil {
		t.Errorf("the forged checkout joined: %+v", p.Repository)
	}
	if !strings.Contains(b.Stderr(), "joins no git repository") || !strings.Contains(b.Stderr(), "not back to "+filepath.Join(forged, ".git")) {
		t.Errorf("the log does not say why the forged checkout joins nothing:\n%s", b.Stderr())
	}

	out, _ := berthCmd(t, b.Home, "projects")
	for _, want := range []string{"repo (main)", "repo (worktree wt-a)", "detached " + head[:7]} {
		if !strings.Contains(out, want) {
			t.Errorf("berth projects lacks %q:\n%s", want, out)
		}
	}

	brokertest.Git(t, wtA, "checkout", "-q", "-b", "topic")
	brokertest.Git(t, wtA, "commit", "-q", "--allow-empty", "-m", "on topic")
	topic := brokertest.Git(t, wtA, "rev-parse", "HEAD")
	brokertest.Eventually(t, "wt-a's new branch in berth projects", func() bool {
		l, ok := projectsJSON(t, b.Home)
		p, _ := projectByRoot(l, wtA)
		return ok && p.Repository != nil && p.Repository.Branch == "topic" && p.Repository.Commit == topic
	})
}

// TestWorktreeRemoveAndPruneLeaveNothing: `git worktree remove` ends the
// worktree's mount, and once its admin folder is gone too (remove, or
// prune after the directory was deleted) berth.db keeps nothing of it;
// the main checkout keeps its record (no worktree stores an index: they share one in memory).
func TestWorktreeRemoveAndPruneLeaveNothing(t *testing.T) {
	t.Parallel()
	repo := brokertest.GitRepo(t, "repo", map[string]string{".praxis-os/standards/a.md": "# A\n\nalpha\n"})
	removed := brokertest.Worktree(t, repo, "removed")
	pruned := brokertest.Worktree(t, repo, "pruned")
	b := brokertest.StartBroker(t, brokertest.Options{})
	ids := map[string]string{}
	for _, root := range []string{repo, removed, pruned} {
		ids[root] = b.Attach(t, root).ID
	}
	brokertest.Eventually(t, "every index ready", func() bool {
		l, ok := projectsJSON(t, b.Home)
		for _, p := range l.Projects {
			if p.Index == nil || p.Index.State != "ready" {
				return false
			}
		}
		return ok && len(l.Projects) == 3
	})

	brokertest.Git(t, repo, "worktree", "remove", "--force", removed)
	if err := os.RemoveAll(pruned); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "both worktrees unmounted", func() bool {
		l, ok := projectsJSON(t, b.Home)
		return ok && len(l.Projects) == 1 && l.Projects[0].Root == repo
	})
	forgotten := func(id string) bool {
		for _, line := range strings.Split(b.Stderr(), "\n") {
			if strings.Contains(line, "forgot a removed git worktree") && strings.Contains(line, "project="+id+" ") {
				return true
			}
		}
		return false
	}
	brokertest.Eventually(t, "the removed worktree forgotten", func() bool { return forgotten(ids[removed]) })
	// A worktree removed now is forgotten by a sweep that runs after the
	// deleted one was unmounted: that sweep must keep the deleted one,
	// whose admin folder is still there.
	later := brokertest.Worktree(t, repo, "later")
	b.Attach(t, later)
	brokertest.Git(t, repo, "worktree", "remove", "--force", later)
	brokertest.Eventually(t, "a later removed worktree forgotten", func() bool { return forgotten(api.ProjectID(later)) })
	if forgotten(ids[pruned]) {
		t.Fatalf("a deleted worktree forgotten while its admin folder remains:\n%s", b.Stderr())
	}
	brokertest.Git(t, repo, "worktree", "prune")
	brokertest.Eventually(t, "the pruned worktree forgotten", func() bool { return forgotten(ids[pruned]) })
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}

	db, err := store.OpenReadOnly(filepath.Join(b.Home, "berth.db"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for root, kept := range map[string]bool{repo: true, removed: false, pruned: false} {
		_, has, err := db.GetProject(ids[root])
		var index bool
		if verr := db.Area(ids[root], "index").View(func(b *store.Bucket) error { index = b.Exists(); return nil }); err == nil {
			err = verr
		}
		// No worktree stores an index of its own: its search shares the
		// repository's content index, held in memory.
		if err != nil || has != kept || index {
			t.Errorf("%s: registry record %v, index %v (err %v); want the record %v and no index", root, has, index, err, kept)
		}
	}
}

// TestApprovalCoversSiblingWorktrees: a server approved in the main
// checkout runs in a sibling worktree mounted before the approval and in
// one added after it, without approving them; a worktree whose branch
// edits the server's script waits for its own approval, and berth servers
// says what differs from the sibling's approval.
func TestApprovalCoversSiblingWorktrees(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-memory")
	root := brokertest.Project(t, "repo", map[string]string{".praxis-os/standards/a.md": "# A\n"})
	serverSh := filepath.Join(root, ".praxis-os", "server.sh")
	if err := os.WriteFile(serverSh, []byte(fmt.Sprintf("#!/bin/sh\nexec %q %q\n", node, script)), 0o755); err != nil {
		t.Fatal(err)
	}
	writeServers(t, root, fmt.Sprintf("  memory:\n    command: ./.praxis-os/server.sh\n    env: {MEMORY_FILE_PATH: %q}\n", filepath.Join(t.TempDir(), "g.jsonl")))
	brokertest.Git(t, root, "init", "-q", "-b", "main")
	brokertest.Git(t, root, "add", "-A")
	brokertest.Git(t, root, "commit", "-q", "-m", "first")
	before := brokertest.Worktree(t, root, "before")
	edited := brokertest.Worktree(t, root, "edited")
	if err := os.WriteFile(filepath.Join(edited, ".praxis-os", "server.sh"), []byte(fmt.Sprintf("#!/bin/sh\necho edited >&2\nexec %q %q\n", node, script)), 0o755); err != nil {
		t.Fatal(err)
	}
	brokertest.Git(t, edited, "commit", "-q", "-am", "edit the server")

	b := brokertest.StartBroker(t, brokertest.Options{})
	b.Attach(t, root)
	sBefore := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, before).URL})
	if st := serverStatus(t, ctx, b, before, "memory"); st.State != api.ServerNeedsApproval {
		t.Fatalf("a sibling's server before any approval: %+v", st)
	}
	if out, code := berthCmd(t, b.Home, "servers", "approve", root); code != 0 {
		t.Fatalf("approve: %d\n%s", code, out)
	}
	brokertest.Eventually(t, "the server runs in the worktree mounted before the approval", func() bool {
		res, err := sBefore.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
		return err == nil && !res.IsError
	})

	after := brokertest.Worktree(t, root, "after")
	sAfter := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, after).URL})
	callText(t, ctx, sAfter, "memory__read_graph", map[string]any{})

	b.Attach(t, edited)
	st := serverStatus(t, ctx, b, edited, "memory")
	want := "file .praxis-os/server.sh (against its approval in the worktree " + root + ")"
	if st.State != api.ServerNeedsApproval || !slices.Contains(st.Changed, want) {
		t.Fatalf("the edited worktree's server: %+v; want it waiting, changed %q", st, want)
	}
	out, _ := berthCmd(t, b.Home, "servers", "--project", edited)
	mustContain(t, out, want, "berth servers approve "+edited)
}

// approvedRepository makes a git repository declaring servers (lines of
// its config's servers: map), with worktrees one and two, and a broker on
// which its main checkout is attached and its servers approved.
func approvedRepository(t *testing.T, servers string) (b *brokertest.Broker, root, one, two string) {
	t.Helper()
	root = brokertest.Project(t, "repo", map[string]string{".praxis-os/standards/a.md": "# A\n"})
	writeServers(t, root, servers)
	brokertest.Git(t, root, "init", "-q", "-b", "main")
	brokertest.Git(t, root, "add", "-A")
	brokertest.Git(t, root, "commit", "-q", "-m", "first")
	one, two = brokertest.Worktree(t, root, "one"), brokertest.Worktree(t, root, "two")
	b = brokertest.StartBroker(t, brokertest.Options{})
	b.Attach(t, root)
	if out, code := berthCmd(t, b.Home, "servers", "approve", root); code != 0 {
		t.Fatalf("approve: %d\n%s", code, out)
	}
	return b, root, one, two
}

// TestShareRepositoryRunsOneProcess: a share: repository server runs once
// for the worktrees of a repository: an entity one worktree's client
// creates is read from another's, and every worktree names one process.
func TestShareRepositoryRunsOneProcess(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-memory")
	memory := func(file string) string {
		return fmt.Sprintf("  memory:\n    command: %q\n    args: [%q]\n    share: repository\n    env: {MEMORY_FILE_PATH: %q}\n", node, script, file)
	}
	graph := filepath.Join(t.TempDir(), "graph.jsonl")
	b, root, one, two := approvedRepository(t, memory(graph))
	sOne := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, one).URL})
	sTwo := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, two).URL})
	callText(t, ctx, sOne, "memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "berth-worktree-entity", "entityType": "note", "observations": []any{"made in one"}}}})
	if got := callText(t, ctx, sTwo, "memory__read_graph", map[string]any{}); !strings.Contains(got, "berth-worktree-entity") {
		t.Fatalf("worktree two does not read what one created: %s", got)
	}
	pid := serverStatus(t, ctx, b, one, "memory").PID
	for _, wt := range []string{root, two} {
		if st := serverStatus(t, ctx, b, wt, "memory"); st.PID != pid || pid == 0 {
			t.Errorf("%s's memory server is process %d, one's is %d", wt, st.PID, pid)
		}
	}

	// A project in no repository runs a process of its own, for the same
	// definition.
	alone := brokertest.Project(t, "alone", nil)
	writeServers(t, alone, memory(graph))
	if out, code := berthCmd(t, b.Home, "servers", "approve", alone); code != 0 {
		t.Fatalf("approve: %d\n%s", code, out)
	}
	sAlone := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, alone).URL})
	callText(t, ctx, sAlone, "memory__read_graph", map[string]any{})
	if st := serverStatus(t, ctx, b, alone, "memory"); st.PID == pid || st.PID == 0 {
		t.Errorf("a project in no repository: memory server process %d, the repository's %d", st.PID, pid)
	}
}

// TestShareRepositoryRootsNameEveryWorktree: the real server-filesystem,
// declared share: repository with no folder in its args, takes its allowed
// directories from its roots/list answer: one process serves the
// repository's worktrees, and the answer names every worktree holding it,
// the ones attached after it started included (roots/list_changed).
func TestShareRepositoryRootsNameEveryWorktree(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-filesystem")
	b, root, one, two := approvedRepository(t, fmt.Sprintf("  fs:\n    command: %q\n    args: [%q]\n    share: repository\n    tools: {allow: [list_allowed_directories]}\n", node, script))
	sOne := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, one).URL})
	allowed := func(want ...string) string {
		t.Helper()
		var dirs string
		ok := brokertest.Poll(30*time.Second, func() bool {
			res, err := sOne.CallTool(ctx, &mcp.CallToolParams{Name: "fs__list_allowed_directories", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				return false
			}
			dirs = brokertest.ResultText(res)
			for _, w := range want {
				if !slices.Contains(strings.Fields(dirs), w) {
					return false
				}
			}
			return true
		})
		if !ok {
			t.Fatalf("server-filesystem's allowed directories: %q, want %q among them", dirs, want)
		}
		return dirs
	}
	allowed(root, one)
	sTwo := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, two).URL})
	dirs := allowed(root, one, two)
	for _, f := range strings.Fields(dirs) {
		if filepath.IsAbs(f) && !slices.Contains([]string{root, one, two}, f) {
			t.Errorf("allowed directories %q name %s, no worktree holding the server", dirs, f)
		}
	}
	if got := callText(t, ctx, sTwo, "fs__list_allowed_directories", map[string]any{}); got != dirs {
		t.Errorf("worktree two's answer %q differs from one's %q: not one process", got, dirs)
	}
	pid := serverStatus(t, ctx, b, one, "fs").PID
	if st := serverStatus(t, ctx, b, two, "fs"); st.PID != pid || pid == 0 {
		t.Errorf("two's fs server is process %d, one's is %d", st.PID, pid)
	}
}
