package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store/storetest"
)

// emptyObjectsSession is a praxis-os session file whose metadata holds
// empty objects up to about size bytes.
func emptyObjectsSession(id string, size int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"session_id": %q, "workflow_type": "bug_fix_v1", "target_file": "src/%s.go", "current_phase": 1, "metadata": {"total_phases": 3`, id, id)
	for i := 0; b.Len() < size-16; i++ {
		fmt.Fprintf(&b, `, "k%d": {}`, i)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// TestHostileSessionFilesAreBounded: a 16 MiB session file of metadata of
// empty objects (+645 MB on attach before) is refused from its size; eight
// files just under the cap import, keep only what the engine uses, and
// make listing, get_workflow_state and the target_file completion cheap
// (7 s, 6 s and a 33 MB answer, 12.8 s and +1 GB before).
func TestHostileSessionFilesAreBounded(t *testing.T) {
	root := newProject(t)
	dir := filepath.Join(root, ".praxis-os", ".cache", "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.json"), emptyObjectsSession("huge", 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	var e *Engine
	cost := workflowtest.Measure(func() { e = openEngine(t, db, root, "p") })
	rep := e.Imported()
	if rep.Imported != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "at most 1048576 are imported") {
		t.Fatalf("report = %+v", rep)
	}
	workflowtest.Refusal.Check(t, "refusing a 16 MiB session file", cost)
	e.Close()

	if err := os.Remove(filepath.Join(dir, "huge.json")); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		id := fmt.Sprintf("s%d", i)
		if err := os.WriteFile(filepath.Join(dir, id+".json"), emptyObjectsSession(id, maxStateFileBytes-64), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cost = workflowtest.Measure(func() { e = openEngine(t, db, root, "p") })
	if rep := e.Imported(); rep.Imported != 5 || rep.Deferred != 3 {
		t.Fatalf("one open reads up to 4 MiB (and the file that passes it): report %+v", rep)
	}
	workflowtest.Request.Check(t, "importing five 1 MiB session files", cost)
	e.Close()
	e = openEngine(t, db, root, "p")
	if rep := e.Imported(); rep.Imported != 3 || rep.AlreadyImported != 5 {
		t.Fatalf("the next open imports the rest: report %+v", rep)
	}

	ctx := context.Background()
	var state StateResult
	var err error
	cost = workflowtest.Measure(func() { state, err = e.State(ctx, "s3") })
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(state)
	if state.TotalPhases != 3 || len(state.Metadata) != 1 || len(raw) > 16<<10 {
		t.Fatalf("get_workflow_state answers %d bytes, metadata %v", len(raw), state.Metadata)
	}
	workflowtest.Refusal.Check(t, "get_workflow_state of an imported session", cost)

	var list SessionList
	cost = workflowtest.Measure(func() { list, err = e.Sessions(ctx, FilterAll) })
	if err != nil || list.Count != 8 {
		t.Fatalf("list = %d sessions, %v", list.Count, err)
	}
	workflowtest.Refusal.Check(t, "listing eight imported sessions", cost)
}

// linkState makes root's .praxis-os/.cache/state a relative link to
// target (as a repository can commit one).
func linkState(t *testing.T, root, target string) {
	t.Helper()
	cache := filepath.Join(root, ".praxis-os", ".cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(cache, target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(cache, "state")); err != nil {
		t.Fatal(err)
	}
}

// TestStateFolderLinkedOutsideIsNotRead: a state folder that is a link to
// a folder elsewhere, or to a sibling project's state, is not read: its
// sessions are not imported, and the report and the log say why. A link
// that stays inside the project is followed.
func TestStateFolderLinkedOutsideIsNotRead(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(base, "elsewhere", "state")
	sibling := filepath.Join(base, "sibling")
	copyStateFixture(t, sibling)
	if err := os.CopyFS(elsewhere, os.DirFS(filepath.Join("testdata", "praxis-state"))); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"a folder elsewhere":        elsewhere,
		"a sibling project's state": filepath.Join(sibling, ".praxis-os", ".cache", "state"),
	} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(base, strings.ReplaceAll(name, " ", "-"))
			if err := os.CopyFS(filepath.Join(root, ".praxis-os", "workflows"), ExampleWorkflows()); err != nil {
				t.Fatal(err)
			}
			linkState(t, root, target)
			db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
			e := openEngine(t, db, root, "p")
			rep := e.Imported()
			if rep.Imported != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].File != ".praxis-os/.cache/state" ||
				!strings.Contains(rep.Skipped[0].Reason, "it is a link to "+target+", outside the project") {
				t.Fatalf("report = %+v", rep)
			}
			if _, err := e.State(context.Background(), "6f1c2a1e-8b7d-4c55-9a31-2f0d7e4b9c10"); err == nil {
				t.Fatal("get_workflow_state answers a session read through the link")
			}
		})
	}

	// Inside the project, a link is followed; a file linked outside is not.
	root := filepath.Join(base, "inside")
	if err := os.CopyFS(filepath.Join(root, ".praxis-os", "workflows"), ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(root, "sessions")
	if err := os.CopyFS(kept, os.DirFS(filepath.Join("testdata", "praxis-state"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "0b9e7d4a-1f23-4e8b-b6a2-5c3d9e8f7a61.json"), filepath.Join(kept, "stolen.json")); err != nil {
		t.Fatal(err)
	}
	linkState(t, root, kept)
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	e := openEngine(t, db, root, "p")
	rep := e.Imported()
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[s.File] = s.Reason
	}
	if rep.Imported != 2 || !strings.Contains(reasons["stolen.json"], "a link that leads outside the project") {
		t.Fatalf("report = %+v", rep)
	}
}
