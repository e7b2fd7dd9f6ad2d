package workflow

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/gitrepo"
	"github.com/berth-dev/berth/store/storetest"
)

// gitWorktree is a project's repository as the files of a real git
// worktree tell it, with the siblings the broker would name.
type gitWorktree struct {
	root string
	sibs []Sibling
}

func (g gitWorktree) Checkout() Checkout {
	id := gitrepo.Identify(g.root)
	h, err := gitrepo.ReadHead(id.GitDir, id.CommonDir)
	if !id.Member() || err != nil {
		return Checkout{}
	}
	return Checkout{Root: g.root, Branch: h.Branch, Commit: h.Commit}
}

func (g gitWorktree) Siblings(ctx context.Context) ([]Sibling, error) { return g.sibs, ctx.Err() }

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=berth", "GIT_AUTHOR_EMAIL=berth@example.com",
		"GIT_COMMITTER_NAME=berth", "GIT_COMMITTER_EMAIL=berth@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestSessionsAcrossWorktrees: two engines on one berth.db, for the main
// checkout and a linked worktree of a real git repository. A session
// records its worktree and branch; scope repository lists the sibling's
// sessions read-only, with their last checkpoint; the tools that change a
// session refuse a sibling's and name its worktree; a branch switch shows
// in State; each change of a session is signalled.
func TestSessionsAcrossWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mainRoot, fixRoot := filepath.Join(dir, "app"), filepath.Join(dir, "fix")
	if err := os.CopyFS(filepath.Join(mainRoot, ".praxis-os", "workflows"), ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
	git(t, mainRoot, "init", "-q", "-b", "main")
	git(t, mainRoot, "add", "-A")
	git(t, mainRoot, "commit", "-q", "-m", "first")
	git(t, mainRoot, "worktree", "add", "-q", "-b", "fix-login", fixRoot)

	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	open := func(root, id string, sib Sibling) *Engine {
		e, err := Open(ctx, Options{Root: root, DB: db, ProjectID: id, Logger: testLogger(t), Lambdas: testLambdas,
			Repository: gitWorktree{root: root, sibs: []Sibling{sib}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	app := open(mainRoot, "app", Sibling{ProjectID: "fix", Root: fixRoot, Branch: "fix-login", Mounted: true})
	fix := open(fixRoot, "fix", Sibling{ProjectID: "app", Root: mainRoot, Branch: "main"})

	changed := fix.SessionsChanged()
	started, err := fix.Start(ctx, "bug_fix_v1", "src/parser.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("SessionsChanged was not closed by a start")
	}
	sid := started.SessionID
	if _, err := fix.CompletePhase(ctx, sid, 1, phase1OK, false); err != nil {
		t.Fatal(err)
	}
	st, err := fix.State(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Worktree != fixRoot || st.Branch != "fix-login" || len(st.Commit) != 40 || st.Checkout == nil || st.Checkout.Moved {
		t.Fatalf("the session records worktree %q branch %q commit %q, checkout %+v", st.Worktree, st.Branch, st.Commit, st.Checkout)
	}
	own, err := app.Start(ctx, "bug_fix_v1", "src/other.go", nil)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := app.SessionsIn(ctx, "", "everywhere"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("scope everywhere: %v", err)
	}
	if l, err := app.SessionsIn(ctx, "", ""); err != nil || l.Count != 1 || l.Sessions[0].SessionID != own.SessionID {
		t.Fatalf("the default scope: %+v %v, want app's own session", l, err)
	}
	l, err := app.SessionsIn(ctx, StatusActive, ScopeRepository)
	if err != nil || l.Count != 2 || l.Scope != ScopeRepository || len(l.Worktrees) != 1 || l.Worktrees[0].Root != fixRoot {
		t.Fatalf("scope repository: %+v %v", l, err)
	}
	var sib SessionSummary
	for _, s := range l.Sessions {
		if s.SessionID == sid {
			sib = s
		} else if s.ReadOnly || s.Project != "app" || s.Branch != "main" {
			t.Errorf("app's own row: %+v", s)
		}
	}
	if !sib.ReadOnly || sib.Project != "fix" || sib.Worktree != fixRoot || sib.Branch != "fix-login" || sib.CurrentPhase != 2 ||
		sib.LastCheckpoint == nil || sib.LastCheckpoint.Phase != 1 || sib.LastCheckpoint.Status != CheckpointPassed || sib.Mounted == nil || !*sib.Mounted {
		t.Fatalf("fix's row read from app: %+v (last checkpoint %+v)", sib, sib.LastCheckpoint)
	}

	if _, err := app.CompletePhase(ctx, sid, 2, phase2OK, false); !errors.Is(err, ErrSessionElsewhere) || !strings.Contains(err.Error(), fixRoot) {
		t.Fatalf("complete_phase of fix's session from app: %v", err)
	}
	wantKind(t, func() error { _, err := app.DeleteSession(ctx, sid); return err }(), ErrSessionElsewhere)
	read, err := app.State(ctx, sid)
	if err != nil || !read.ReadOnly || read.Project != "fix" || read.CurrentPhase != 2 {
		t.Fatalf("fix's session read from app: %+v %v", read, err)
	}
	if _, err := app.State(ctx, "no-such-session"); !errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrSessionElsewhere) {
		t.Fatalf("an unknown session: %v", err)
	}
	if _, err := fix.Session(ctx, sid); err != nil {
		t.Fatalf("fix's session after app's refused delete: %v", err)
	}

	git(t, fixRoot, "checkout", "-q", "-b", "elsewhere")
	st, err = fix.State(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Checkout == nil || !st.Checkout.Moved || st.Checkout.BranchNow != "elsewhere" || !strings.Contains(strings.Join(st.Warnings, "\n"), "from branch fix-login") {
		t.Fatalf("after a checkout of another branch: %+v %q", st.Checkout, st.Warnings)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := app.SessionsIn(cancelled, "", ScopeRepository); err == nil {
		t.Fatal("a listing with its context ended did not fail")
	}
}
