package workflow

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store/storetest"
)

// copyStateFixture puts testdata/praxis-state into root/.praxis-os/.cache/state.
func copyStateFixture(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, ".praxis-os", ".cache", "state")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "praxis-state"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

type fileStamp struct {
	data  []byte
	mtime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileStamp {
	t.Helper()
	out := map[string]fileStamp{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		data, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		out[e.Name()] = fileStamp{data, fi.ModTime()}
	}
	return out
}

func TestImportPraxisSessions(t *testing.T) {
	root := newProject(t)
	stateDir := copyStateFixture(t, root)
	before := snapshot(t, stateDir)
	dbPath := filepath.Join(t.TempDir(), "berth.db")
	db := storetest.Open(t, dbPath)
	e := openEngine(t, db, root, "proj")
	ctx := context.Background()

	rep := e.Imported()
	if rep.Imported != 2 || rep.AlreadyImported != 0 {
		t.Fatalf("report = %+v", rep)
	}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.File)
	}
	slices.Sort(skipped)
	if !slices.Equal(skipped, []string{"corrupt-session.json", "no-workflow-type.json"}) {
		t.Fatalf("skipped %q", rep.Skipped)
	}

	// The praxis-os files are untouched.
	after := snapshot(t, stateDir)
	for name, b := range before {
		a := after[name]
		if !bytes.Equal(a.data, b.data) || !a.mtime.Equal(b.mtime) {
			t.Errorf("%s changed", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("state folder has %d files, had %d", len(after), len(before))
	}

	const activeID = "6f1c2a1e-8b7d-4c55-9a31-2f0d7e4b9c10"
	st, err := e.State(ctx, activeID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusActive || st.CurrentPhase != 2 || st.TotalPhases != 3 || st.FirstPhase != 1 ||
		st.Checkpoints["1"] != CheckpointPassed || st.PhaseArtifacts["1"].Evidence["reproduced"] != true ||
		st.ImportedFrom != activeID+".json" || st.Metadata["started_by"] != "cursor" || st.CreatedAt.Year() != 2025 {
		t.Fatalf("imported active session = %+v", st.Session)
	}
	done, err := e.State(ctx, "0b9e7d4a-1f23-4e8b-b6a2-5c3d9e8f7a61")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != StatusCompleted || done.FirstPhase != 0 || done.Checkpoints["3"] != CheckpointPassed || done.Progress != "5/5" {
		t.Fatalf("imported completed session = %+v", done.Session)
	}

	// The imported session is shared: starting the same workflow and target resumes it,
	// and it carries on from phase 2.
	res, err := e.Start(ctx, "bug_fix_v1", "src/parser.go", nil)
	if err != nil || !res.Resumed || res.SessionID != activeID || res.CurrentPhase != 2 {
		t.Fatalf("start on the imported target = %+v, %v", res, err)
	}
	if _, err := e.CompletePhase(ctx, activeID, 2, phase2OK, false); err != nil {
		t.Fatal(err)
	}

	// A second open imports nothing again (even a deleted session stays
	// deleted), and retries the unreadable files.
	if _, err := e.DeleteSession(ctx, "0b9e7d4a-1f23-4e8b-b6a2-5c3d9e8f7a61"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e2 := openEngine(t, db, root, "proj")
	rep2 := e2.Imported()
	if rep2.Imported != 0 || rep2.AlreadyImported != 2 || len(rep2.Skipped) != 2 {
		t.Fatalf("second report = %+v", rep2)
	}
	if _, err := e2.State(ctx, "0b9e7d4a-1f23-4e8b-b6a2-5c3d9e8f7a61"); err == nil {
		t.Fatal("a deleted imported session came back")
	}
	st, _ = e2.State(ctx, activeID)
	if st.CurrentPhase != 3 {
		t.Fatalf("progress made after import was overwritten: %+v", st.Session)
	}
	// A fixed file imports on the next open.
	fixed := `{"session_id": "a1b2c3d4-0000-4000-8000-000000000001", "workflow_type": "bug_fix_v1", "target_file": "x", "current_phase": 1}`
	if err := os.WriteFile(filepath.Join(stateDir, "no-workflow-type.json"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	e2.Close()
	e3 := openEngine(t, db, root, "proj")
	if rep3 := e3.Imported(); rep3.Imported != 1 || len(rep3.Skipped) != 1 || !strings.Contains(rep3.Skipped[0].Reason, "JSON") {
		t.Fatalf("third report = %+v", rep3)
	}
}

func TestParsePraxisStateTolerance(t *testing.T) {
	mtime := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, file, data string
		wantErr          string
		check            func(t *testing.T, s *Session)
	}{
		{name: "id from file name, string numbers", file: "abc-123.json",
			data: `{"workflow_type":"w","current_phase":"2","completed_phases":["1", 1, "x", 1.5],"checkpoints":{"1":"Passed","2":"weird","x":"passed"},"updated_at":1700000000}`,
			check: func(t *testing.T, s *Session) {
				if s.SessionID != "abc-123" || s.CurrentPhase != 2 || !slices.Equal(s.CompletedPhases, []int{1}) ||
					len(s.Checkpoints) != 1 || s.UpdatedAt.Unix() != 1700000000 || !s.CreatedAt.Equal(mtime) || s.Status != StatusActive {
					t.Errorf("session = %+v", s)
				}
			}},
		{name: "explicit completed status", file: "s.json", data: `{"session_id":"s1","workflow_type":"w","current_phase":1,"status":"completed"}`,
			check: func(t *testing.T, s *Session) {
				if s.Status != StatusCompleted {
					t.Errorf("status %q", s.Status)
				}
			}},
		{name: "artifacts", file: "s.json", data: `{"session_id":"s1","workflow_type":"w","current_phase":1,"phase_artifacts":{"0":{"evidence":{"a":1},"outputs":{"o":2},"timestamp":"2025-10-11 13:16:57"},"bad":{},"1":"str"}}`,
			check: func(t *testing.T, s *Session) {
				a := s.PhaseArtifacts["0"]
				if len(s.PhaseArtifacts) != 1 || a.Evidence["a"] != 1.0 || a.Outputs["o"] != 2.0 || a.Timestamp.Year() != 2025 {
					t.Errorf("artifacts = %+v", s.PhaseArtifacts)
				}
			}},
		{name: "not an object", file: "s.json", data: `[1,2]`, wantErr: "not a JSON object"},
		{name: "null", file: "s.json", data: `null`, wantErr: "not a JSON object"},
		{name: "no workflow_type", file: "s.json", data: `{"current_phase":1}`, wantErr: "workflow_type"},
		{name: "no current_phase", file: "s.json", data: `{"workflow_type":"w"}`, wantErr: "current_phase"},
		{name: "bad id", file: "x y.json", data: `{"workflow_type":"w","current_phase":1}`, wantErr: "not usable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parsePraxisState(tc.file, []byte(tc.data), mtime)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func FuzzParsePraxisState(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join("testdata", "praxis-state"))
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join("testdata", "praxis-state", e.Name()))
		f.Add(e.Name(), data)
	}
	f.Add("huge.json", emptyObjectsSession("huge", 64<<10))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		var s *Session
		var err error
		cost := workflowtest.MeasureQuick(func() { s, err = parsePraxisState(name, data, time.Unix(0, 0)) })
		workflowtest.Refusal.Check(t, "a session file", cost)
		if err != nil {
			return
		}
		if checkSessionID(s.SessionID) != nil || s.WorkflowType == "" || s.CurrentPhase < 0 || s.CompletedPhases == nil ||
			s.PhaseArtifacts == nil || s.Checkpoints == nil || (s.Status != StatusActive && s.Status != StatusCompleted) {
			t.Fatalf("accepted an invalid session: %+v", s)
		}
	})
}
