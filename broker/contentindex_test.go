package broker

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/gitrepo"
)

// TestContentIndexOf: the worktrees of one repository get one content
// index; a lone checkout, a checkout whose .git only claims the repository
// and a project whose sections are embedded get none.
func TestContentIndexOf(t *testing.T) {
	var c contentIndexes
	discard := slog.New(slog.DiscardHandler)
	repo := brokertest.GitRepo(t, "repo", map[string]string{".praxis-os/standards/a.md": "# A\n"})
	if sh := c.of(gitrepo.Identify(repo), false, discard); sh != nil {
		t.Fatal("a lone checkout shares an index")
	}
	wt := brokertest.Worktree(t, repo, "wt")
	main, linked := c.of(gitrepo.Identify(repo), false, discard), c.of(gitrepo.Identify(wt), false, discard)
	if main == nil || main != linked {
		t.Fatalf("the main checkout and its worktree share %p and %p, want one index", main, linked)
	}
	if sh := c.of(gitrepo.Identify(wt), true, discard); sh != nil {
		t.Fatal("a worktree whose sections are embedded shares an index")
	}
	forged := brokertest.Project(t, "forged", map[string]string{".praxis-os/standards/f.md": "# F\n",
		".git": "gitdir: " + filepath.Join(repo, ".git", "worktrees", "wt") + "\n"})
	if sh := c.of(gitrepo.Identify(forged), false, discard); sh != nil {
		t.Fatal("a checkout that only claims the repository shares its index")
	}
}
