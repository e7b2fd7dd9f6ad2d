package workflow

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
)

// TestConcurrentCompleteOneWinner runs many completions of the same phase
// through real bbolt: exactly one advances, every other one is told the phase
// is already completed.
func TestConcurrentCompleteOneWinner(t *testing.T) {
	e, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := e.Start(ctx, "bug_fix_v1", "src/race.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		phase int
		ev    map[string]any
	}{{1, phase1OK}, {2, phase2OK}} {
		const n = 32
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			wins, conflict int
			others         []error
		)
		start := make(chan struct{})
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res, err := e.CompletePhase(ctx, st.SessionID, step.phase, step.ev, false)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && res.CheckpointPassed:
					wins++
				case errors.Is(err, ErrPhaseCompleted):
					conflict++
				default:
					others = append(others, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins != 1 || conflict != n-1 || len(others) != 0 {
			t.Fatalf("phase %d: %d winners, %d conflicts, other outcomes %v", step.phase, wins, conflict, others)
		}
		state, err := e.State(ctx, st.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if state.CurrentPhase != step.phase+1 || len(state.CompletedPhases) != step.phase || state.PhaseArtifacts[phaseKey(step.phase)].Attempts != 1 {
			t.Fatalf("after phase %d: %+v", step.phase, state.Session)
		}
	}
}

// TestConcurrentStartSharesSession checks that clients starting the same
// workflow on the same target at once all get one session.
func TestConcurrentStartSharesSession(t *testing.T) {
	e, _ := setup(t)
	ctx := context.Background()
	const n = 16
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := e.Start(ctx, "bug_fix_v1", "shared.go", nil)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- st.SessionID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != 1 {
		t.Fatalf("%d sessions for one workflow and target", len(seen))
	}
}

// TestRestartKeepsSessions closes the engine and the database mid-workflow
// and opens them again.
func TestRestartKeepsSessions(t *testing.T) {
	root := newProject(t)
	path := filepath.Join(t.TempDir(), "berth.db")
	ctx := context.Background()

	db, err := store.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e := openEngine(t, db, root, "proj")
	st, err := e.Start(ctx, "bug_fix_v1", "src/app.go", map[string]any{"ticket": "BUG-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CompletePhase(ctx, st.SessionID, 1, phase1OK, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CompletePhase(ctx, st.SessionID, 2, map[string]any{"tests_failed": 1.0}, false); err != nil {
		t.Fatal(err)
	}
	before, _ := e.State(ctx, st.SessionID)
	e.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2 := storetest.Open(t, path)
	e2 := openEngine(t, db2, root, "proj")
	after, err := e2.State(ctx, st.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if after.CurrentPhase != 2 || after.Checkpoints["1"] != CheckpointPassed || after.Checkpoints["2"] != CheckpointFailed ||
		after.PhaseArtifacts["1"].Evidence["root_cause"] != phase1OK["root_cause"] || after.Options["ticket"] != "BUG-1" ||
		!after.CreatedAt.Equal(before.CreatedAt) || after.Progress != "1/3" {
		t.Fatalf("state after restart = %+v\nbefore = %+v", after.Session, before.Session)
	}
	resumed, err := e2.Start(ctx, "bug_fix_v1", "src/app.go", nil)
	if err != nil || !resumed.Resumed || resumed.SessionID != st.SessionID {
		t.Fatalf("start after restart = %+v, %v", resumed, err)
	}
	if res, err := e2.CompletePhase(ctx, st.SessionID, 2, phase2OK, false); err != nil || !res.CheckpointPassed {
		t.Fatalf("complete after restart = %+v, %v", res, err)
	}
}

// TestProjectIsolation: a session id of project A is not found on project B
// of the same database.
func TestProjectIsolation(t *testing.T) {
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	a := openEngine(t, db, newProject(t), "proj-a")
	b := openEngine(t, db, newProject(t), "proj-b")
	ctx := context.Background()
	st, err := a.Start(ctx, "bug_fix_v1", "src/app.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.State(ctx, st.SessionID)
	wantKind(t, err, ErrSessionNotFound)
	_, err = b.CurrentPhase(ctx, st.SessionID)
	wantKind(t, err, ErrSessionNotFound)
	_, err = b.CompletePhase(ctx, st.SessionID, 1, phase1OK, false)
	wantKind(t, err, ErrSessionNotFound)
	_, err = b.Task(ctx, st.SessionID, 1, 1)
	wantKind(t, err, ErrSessionNotFound)
	_, err = b.DeleteSession(ctx, st.SessionID)
	wantKind(t, err, ErrSessionNotFound)
	if list, _ := b.Sessions(ctx, ""); list.Count != 0 {
		t.Fatalf("project B lists %d sessions", list.Count)
	}
	// Same workflow and target on B is a new session, not A's.
	other, err := b.Start(ctx, "bug_fix_v1", "src/app.go", nil)
	if err != nil || other.Resumed || other.SessionID == st.SessionID {
		t.Fatalf("start on B = %+v, %v", other, err)
	}
	if _, err := a.State(ctx, st.SessionID); err != nil {
		t.Fatalf("A lost its session: %v", err)
	}
}
