package hosted

import (
	"github.com/berth-dev/berth/api"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/store/storetest"
)

func TestApprovals(t *testing.T) {
	a := NewApprovals(storetest.Open(t, ""))
	s := validServer("npx", []string{"-y", "@modelcontextprotocol/server-memory"}, nil)
	check := func(project string, want ApprovalState) Approval {
		t.Helper()
		got, err := a.Check(project, "/p", "memory", s, nil)
		if err != nil || got.State != want {
			t.Fatalf("Check(%s) = %+v, %v; want %s", project, got, err, want)
		}
		return got
	}
	check("p1", ApprovalNever)
	if err := a.Approve("p1", "memory", s, nil); err != nil {
		t.Fatal(err)
	}
	if got := check("p1", ApprovalApproved); got.Digest != s.Digest() || got.ApprovedAt.IsZero() {
		t.Errorf("approval %+v", got)
	}
	check("p2", ApprovalNever) // per project
	changed := s
	changed.Args = []string{"-y", "@modelcontextprotocol/server-memory@latest"}
	if changed.Digest() == s.Digest() {
		t.Fatal("the digest ignores args")
	}
	if got, _ := a.Check("p1", "/p", "memory", changed, nil); got.State != ApprovalChanged || got.Digest != s.Digest() {
		t.Errorf("changed definition: %+v", got)
	}
	if err := a.Revoke("p1", "memory", "never-approved"); err != nil {
		t.Fatal(err)
	}
	check("p1", ApprovalNever)
	a.Approve("p1", "memory", s, nil)
	if err := a.Revoke("p1"); err != nil {
		t.Fatal(err)
	}
	check("p1", ApprovalNever)
}

// TestUnapprovedServerDoesNotRun: a project-declared server runs only once
// approved; a changed definition is withdrawn until approved again.
func TestUnapprovedServerDoesNotRun(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	approvals := NewApprovals(storetest.Open(t, ""))
	pool := newPool(t, testOptions())
	d := fakeDecl(t, "fake")
	d.Origin = OriginProject
	root := t.TempDir()
	hp, err := pool.Open(ctx, ProjectSpec{ID: "p1", Name: "p1", Root: root, Approvals: approvals}, []Decl{d})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close(ctx)
	s := connect(t, hp, sessionOpts{})
	st := statusOf(t, hp, "fake")
	if st.State != StateNeedsApproval || st.Fix != "berth servers approve "+root || st.PID != 0 {
		t.Fatalf("unapproved status %+v", st)
	}
	if names := toolNames(t, ctx, s); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fake__") }) {
		t.Fatalf("unapproved tools listed: %v", names)
	}
	if len(pool.Processes()) != 0 {
		t.Fatal("an unapproved server was started")
	}

	if err := approvals.Approve("p1", "fake", d.Server, described(t, root, d)); err != nil {
		t.Fatal(err)
	}
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(toolNames(t, ctx, s), "fake__echo") {
		t.Fatal("approved server's tools not listed")
	}
	pid := statusOf(t, hp, "fake").PID

	changed := d
	changed.Server.Args = []string{"--changed"}
	if err := hp.Update(ctx, []Decl{changed}); err != nil {
		t.Fatal(err)
	}
	st = statusOf(t, hp, "fake")
	if st.State != StateNeedsApproval || !strings.Contains(st.LastError, "changed since it was approved") {
		t.Fatalf("changed definition: %+v", st)
	}
	if slices.Contains(toolNames(t, ctx, s), "fake__echo") {
		t.Fatal("a changed definition's tools are still listed")
	}
	if !gone(pid) {
		t.Errorf("the withdrawn server's process %d still runs", pid)
	}
}

// TestUpdateKeepsProcess: updating with the same definition (a new tool
// filter) keeps the process; disabling stops it.
func TestUpdateKeepsProcess(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	d := fakeDecl(t, "fake")
	hp := openProject(t, newPool(t, testOptions()), "p1", d)
	s := connect(t, hp, sessionOpts{})
	pid := s.call(t, ctx, "fake__pid", nil)
	d.Server.Tools.Deny = []string{"ec*"}
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	names := toolNames(t, ctx, s)
	if slices.Contains(names, "fake__echo") || !slices.Contains(names, "fake__pid") {
		t.Errorf("deny list not applied: %v", names)
	}
	if again := s.call(t, ctx, "fake__pid", nil); again != pid {
		t.Errorf("process changed from %s to %s on a filter change", pid, again)
	}
	no := false
	d.Server.Enabled = &no
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, hp, "fake"); st.State != StateDisabled {
		t.Errorf("disabled status %+v", st)
	}
	if slices.Contains(toolNames(t, ctx, s), "fake__pid") {
		t.Error("a disabled server's tools are listed")
	}
}

// described is what Describe finds d reaches in the project at root.
func described(t testing.TB, root string, d Decl) *api.ServerDefinition {
	t.Helper()
	for _, st := range Describe(ProjectSpec{ID: "p", Root: root}, []Decl{d}) {
		if st.Name == d.Name && st.Definition != nil {
			return st.Definition
		}
	}
	t.Fatalf("Describe found no definition of %s", d.Name)
	return nil
}

// TestApprovalRootsNarrowedOrWidened: a root inside the approved ones (a
// folder the args name, created by the server after the approval) keeps
// the approval; a root beyond them (the folder removed, so the project
// root is answered) needs a new one.
func TestApprovalRootsNarrowedOrWidened(t *testing.T) {
	a := NewApprovals(storetest.Open(t, ""))
	s := validServer("notes", []string{"--dir", "a"}, nil)
	if err := a.Approve("p1", "notes", s, &api.ServerDefinition{Roots: []string{"/p"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		now  []string
		want ApprovalState
	}{
		{[]string{"/p"}, ApprovalApproved},
		{[]string{"/p/a"}, ApprovalApproved},
		{[]string{"/p/a", "/p/b/c"}, ApprovalApproved},
		{[]string{"/"}, ApprovalChanged},
		{[]string{"/p/a", "/elsewhere"}, ApprovalChanged},
		{[]string{"/p-other"}, ApprovalChanged},
	} {
		got, err := a.Check("p1", "/p", "notes", s, &api.ServerDefinition{Roots: c.now})
		if err != nil || got.State != c.want {
			t.Errorf("roots %v after approving [/p]: %+v %v, want %s", c.now, got, err, c.want)
		}
	}
}
