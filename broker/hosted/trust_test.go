package hosted

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trustedProject opens a project at a fresh root with approvals in a
// fresh database; files are written into the root first.
func trustedProject(t *testing.T, files map[string]string) (root string, approvals *Approvals, pool *Pool) {
	t.Helper()
	root = t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, NewApprovals(storetest.Open(t, "")), newPool(t, testOptions())
}

// scriptDecl declares ./server.sh of the project, which runs the fake
// server, with one argument naming a file of the project.
func scriptDecl(t *testing.T) Decl {
	exe, env := fakeCommand(t)
	env["FAKE_BIN"] = exe
	return Decl{Name: "fake", Origin: OriginProject, Server: validServer("./server.sh", []string{"settings.json"}, env)}
}

const script = "#!/bin/sh\nexec \"$FAKE_BIN\" \"$@\"\n"

// TestApprovalCoversTheFilesItRuns: the approval of a server whose command
// is a script of the project, with an argument naming another file of the
// project, covers both files' content. An edit of either stops the server
// within the guard's interval, says which file changed, and the server
// waits for approval; the file edited back runs again, as a definition
// edited back does; approved again, the edited file runs.
func TestApprovalCoversTheFilesItRuns(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	root, approvals, pool := trustedProject(t, map[string]string{"server.sh": script, "settings.json": "{}"})
	d := scriptDecl(t)
	def := described(t, root, d)
	var paths []string
	for _, f := range def.Files {
		paths = append(paths, f.Path)
		if len(f.SHA256) != 64 {
			t.Errorf("file %s has sha256 %q", f.Path, f.SHA256)
		}
	}
	if !slices.Equal(paths, []string{"server.sh", "settings.json"}) {
		t.Fatalf("covered files %v, want server.sh and settings.json", paths)
	}
	if def.Program != filepath.Join(root, "server.sh") {
		t.Errorf("program %q", def.Program)
	}
	if !slices.ContainsFunc(def.Warnings, func(w string) bool { return strings.Contains(w, "server.sh is a file of the project") }) {
		t.Errorf("warnings %q do not say the command is a file of the project", def.Warnings)
	}
	if err := approvals.Approve("p1", "fake", d.Server, def); err != nil {
		t.Fatal(err)
	}
	hp, err := pool.Open(ctx, ProjectSpec{ID: "p1", Name: "p1", Root: root, Approvals: approvals}, []Decl{d})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close(ctx)
	s := connect(t, hp, sessionOpts{})
	pid := s.call(t, ctx, "fake__pid", nil)

	for _, edit := range []string{"server.sh", "settings.json"} {
		p := filepath.Join(root, edit)
		old, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(append([]byte{}, old...), "\n"...), 0o755); err != nil {
			t.Fatal(err)
		}
		if !brokertest.Poll(4*testOptions().GuardEvery+5*time.Second, func() bool { return statusOf(t, hp, "fake").State == StateNeedsApproval }) {
			t.Fatalf("after editing %s the server is %+v", edit, statusOf(t, hp, "fake"))
		}
		st := statusOf(t, hp, "fake")
		if !slices.Contains(st.Changed, "file "+edit) || !strings.Contains(st.LastError, "file "+edit) || st.Fix != "berth servers approve "+root {
			t.Errorf("after editing %s: changed %q, last error %q, fix %q", edit, st.Changed, st.LastError, st.Fix)
		}
		if !brokertest.Poll(10*time.Second, func() bool { return !slices.Contains(toolNames(t, ctx, s), "fake__pid") }) {
			t.Errorf("after editing %s its tools are still served", edit)
		}
		// Edited back: the approved content runs again, no approval needed.
		if err := os.WriteFile(p, old, 0o755); err != nil {
			t.Fatal(err)
		}
		if !brokertest.Poll(4*testOptions().GuardEvery+5*time.Second, func() bool { return statusOf(t, hp, "fake").State != StateNeedsApproval }) {
			t.Fatalf("%s edited back: the server is %+v", edit, statusOf(t, hp, "fake"))
		}
		if again := s.call(t, ctx, "fake__pid", nil); again == pid {
			t.Errorf("the server withdrawn after the edit of %s kept its process %s", edit, pid)
		} else {
			pid = again
		}
	}

	// Approved with the edit: it runs.
	if err := os.WriteFile(filepath.Join(root, "settings.json"), []byte(`{"v": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !brokertest.Poll(4*testOptions().GuardEvery+5*time.Second, func() bool { return statusOf(t, hp, "fake").State == StateNeedsApproval }) {
		t.Fatal("the second edit was not seen")
	}
	if err := approvals.Approve("p1", "fake", d.Server, described(t, root, d)); err != nil {
		t.Fatal(err)
	}
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	s.call(t, ctx, "fake__pid", nil)
}

// TestChangedFileIsNotRunByARestart: a server whose script is edited and
// which crashes at once is not restarted with the new script, whichever
// sees the edit first (the check before each start, or the guard).
func TestChangedFileIsNotRunByARestart(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	root, approvals, pool := trustedProject(t, map[string]string{"server.sh": script, "settings.json": "{}"})
	d := scriptDecl(t)
	if err := approvals.Approve("p1", "fake", d.Server, described(t, root, d)); err != nil {
		t.Fatal(err)
	}
	hp, err := pool.Open(ctx, ProjectSpec{ID: "p1", Name: "p1", Root: root, Approvals: approvals}, []Decl{d})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close(ctx)
	s := connect(t, hp, sessionOpts{})
	s.call(t, ctx, "fake__pid", nil)
	pid := statusOf(t, hp, "fake").PID
	marker := filepath.Join(t.TempDir(), "ran-the-edit")
	evil := "#!/bin/sh\ntouch " + marker + "\nexec \"$FAKE_BIN\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(root, "server.sh"), []byte(evil), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !brokertest.Poll(4*testOptions().GuardEvery+5*time.Second, func() bool { return statusOf(t, hp, "fake").State == StateNeedsApproval }) {
		t.Fatalf("after the edit and a crash the server is %+v", statusOf(t, hp, "fake"))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the edited script ran")
	}
	if st := statusOf(t, hp, "fake"); !strings.Contains(st.LastError, "server.sh") {
		t.Errorf("status does not name the file: %+v", st)
	}
}

// TestVerifyFiles: the check before each start refuses a file whose
// content changed, one that is gone, and a link that leads elsewhere now.
func TestVerifyFiles(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a.js"), filepath.Join(root, "b.js")
	os.WriteFile(a, []byte("a"), 0o644)
	os.WriteFile(b, []byte("b"), 0o644)
	link := filepath.Join(root, "server.js")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	r := inspect(root, validServer("/bin/true", []string{"server.js"}, nil), true)
	if len(r.files) != 1 || r.files[0].Path != "server.js" || r.files[0].Target != "a.js" {
		t.Fatalf("files %+v, want server.js leading to a.js", r.files)
	}
	want := approvedFiles(root, r.files)
	if err := verifyFiles(want); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	os.Remove(link)
	os.Symlink(b, link)
	if err := verifyFiles(want); err == nil || !strings.Contains(err.Error(), "leads to") {
		t.Errorf("link moved: %v", err)
	}
	os.Remove(link)
	os.Symlink(a, link)
	os.WriteFile(a, []byte("a2"), 0o644)
	if err := verifyFiles(want); err == nil || !strings.Contains(err.Error(), "changed since it was approved") {
		t.Errorf("content changed: %v", err)
	}
	os.Remove(a)
	if err := verifyFiles(want); err == nil {
		t.Error("a file gone passed")
	}
}

// TestRootsFollowTheDefinition: roots/list answers the roots setting when
// there is one (an empty one answers none), else the folders the args
// name (a server limited by its definition stays so), else the project
// root.
func TestRootsFollowTheDefinition(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	root, _, pool := trustedProject(t, map[string]string{"src/a.go": "package a", "docs/x.md": "# x"})
	exe, env := fakeCommand(t)
	uri := func(p string) string { return "file://" + filepath.ToSlash(p) }
	for _, tc := range []struct {
		name  string
		args  []string
		roots []string
		want  []string
	}{
		{"none", nil, nil, []string{uri(root)}},
		{"args", []string{"--flag", filepath.Join(root, "src"), "missing"}, nil, []string{uri(filepath.Join(root, "src"))}},
		{"setting", []string{"src"}, []string{"docs", "/"}, []string{uri(filepath.Join(root, "docs")), uri("/")}},
		{"empty", []string{"src"}, []string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validServer(exe, tc.args, env)
			s.Roots = tc.roots
			hp, err := pool.Open(ctx, ProjectSpec{ID: "p-" + tc.name, Name: "p", Root: root}, []Decl{{Name: "fake", Origin: OriginUser, Server: s}})
			if err != nil {
				t.Fatal(err)
			}
			defer hp.Close(ctx)
			got := strings.Fields(connect(t, hp, sessionOpts{}).call(t, ctx, "fake__roots", nil))
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("roots/list = %v, want %v", got, tc.want)
			}
			if def := statusOf(t, hp, "fake").Definition; len(def.Roots) != len(tc.want) {
				t.Errorf("the status shows roots %v", def.Roots)
			}
		})
	}
}

// TestWidenedToolsFilterWaitsForApproval: a tools filter narrowed after
// the approval applies at once; widened (allow removed), the tools the
// approved filter left out are withheld, counted and explained, until the
// server is approved again.
func TestWidenedToolsFilterWaitsForApproval(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	root, approvals, pool := trustedProject(t, nil)
	d := fakeDecl(t, "fake")
	d.Origin = OriginProject
	d.Server.Tools.Allow = []string{"echo", "pid"}
	if err := approvals.Approve("p1", "fake", d.Server, described(t, root, d)); err != nil {
		t.Fatal(err)
	}
	hp, err := pool.Open(ctx, ProjectSpec{ID: "p1", Name: "p1", Root: root, Approvals: approvals}, []Decl{d})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close(ctx)
	s := connect(t, hp, sessionOpts{})
	names := toolNames(t, ctx, s)
	if !slices.Contains(names, "fake__echo") || slices.Contains(names, "fake__sleep") {
		t.Fatalf("approved with allow [echo pid]: %v", names)
	}
	d.Server.Tools.Deny = []string{"echo"} // narrower: no approval needed
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, ctx, s); slices.Contains(names, "fake__echo") || !slices.Contains(names, "fake__pid") {
		t.Errorf("narrowed with deny [echo]: %v", names)
	}
	d.Server.Tools = config.ToolFilter{} // allow removed: wider
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	names = toolNames(t, ctx, s)
	if !slices.Contains(names, "fake__echo") || slices.Contains(names, "fake__sleep") {
		t.Errorf("widened: %v; want the approved echo and pid only", names)
	}
	if st := statusOf(t, hp, "fake"); st.Withheld == 0 || st.State != StateRunning {
		t.Errorf("widened status %+v: want running with tools withheld", st)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fake__sleep", Arguments: map[string]any{"ms": 1}})
	if err == nil && !res.IsError {
		t.Fatal("a withheld tool was called")
	}
	if err == nil || !strings.Contains(err.Error(), "widened since the approval") {
		t.Errorf("calling a withheld tool: %v", err)
	}
	if err := approvals.Approve("p1", "fake", d.Server, described(t, root, d)); err != nil {
		t.Fatal(err)
	}
	if err := hp.Update(ctx, []Decl{d}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(toolNames(t, ctx, s), "fake__sleep") || statusOf(t, hp, "fake").Withheld != 0 {
		t.Error("approved again, the widened filter's tools are not served")
	}
}

// TestShadowedDeclarationIsShown: a project's server named like one of the
// broker's config is listed beside it as shadowed, saying why.
func TestShadowedDeclarationIsShown(t *testing.T) {
	exe, env := fakeCommand(t)
	user := map[string]config.Server{"fake": validServer(exe, nil, env)}
	project := map[string]config.Server{"fake": validServer(exe, []string{"--other"}, env)}
	var rows []Status
	for _, st := range Describe(ProjectSpec{ID: "p", Root: t.TempDir()}, Decls(user, project)) {
		if st.Name == "fake" {
			rows = append(rows, st)
		}
	}
	if len(rows) != 2 || rows[0].Origin != OriginUser || rows[1].Origin != OriginProject || rows[1].State != StateShadowed ||
		!strings.Contains(rows[1].LastError, "the broker's config declares a server \"fake\" too") || rows[1].Definition == nil {
		t.Fatalf("statuses %+v", rows)
	}
}

// TestDefinitionSaysWhatChangesWhatRuns: a code-loading env variable, a
// working directory outside the project and roots outside it are named;
// a command that does not exist is a problem.
func TestDefinitionSaysWhatChangesWhatRuns(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	os.WriteFile(filepath.Join(root, ".praxis-os", "evil.js"), []byte("boom()"), 0o644)
	s := validServer("sh", []string{"-c", "true"}, map[string]string{"NODE_OPTIONS": "--require ./.praxis-os/evil.js", "LD_PRELOAD": "/x.so", "PLAIN": "1"})
	r := inspect(root, s, true)
	if len(r.files) != 1 || r.files[0].Path != filepath.Join(".praxis-os", "evil.js") {
		t.Errorf("the file NODE_OPTIONS loads is not covered: %+v", r.files)
	}
	s.Cwd = "../../../../.."
	s.Roots = []string{"/etc"}
	r = inspect(root, s, true)
	joined := strings.Join(r.warnings, "\n")
	for _, want := range []string{"env NODE_OPTIONS=", "Node.js loads", "env LD_PRELOAD=", "dynamic linker", "is outside the project", "roots include /etc"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "PLAIN") {
		t.Errorf("a plain variable is called code-loading:\n%s", joined)
	}
	if r.program == "" || len(r.problems) != 0 {
		t.Errorf("sh: program %q problems %q", r.program, r.problems)
	}
	for _, cmd := range []string{"no-such-command-berth", "./missing.sh"} {
		if r := inspect(root, validServer(cmd, nil, nil), true); r.program != "" || len(r.problems) != 1 {
			t.Errorf("%s: program %q problems %q", cmd, r.program, r.problems)
		}
	}
}
