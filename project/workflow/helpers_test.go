package workflow

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
)

// testLogger discards logs unless -v is given.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newProject makes a project root holding the example workflows and returns it.
func newProject(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, ".praxis-os", "workflows"), ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
	return root
}

// testLambdas runs gate lambdas in this test binary (TestMain), as the
// broker runs them in the berth binary, under the broker's limits (their
// CPU time and deadline stretched in race builds).
var testLambdas = lambdaproc.New([]string{os.Args[0], lambdaproc.ChildCommand}, lambdaproc.Limits{
	Memory: lambdaproc.DefaultLimits.Memory, CPU: workflowtest.RaceSlack * lambdaproc.DefaultLimits.CPU, Timeout: workflowtest.RaceSlack * lambdaproc.DefaultLimits.Timeout}, 2)

func openEngine(t testing.TB, db *store.DB, root, projectID string) *Engine {
	t.Helper()
	e, err := Open(context.Background(), Options{Root: root, DB: db, ProjectID: projectID, Logger: testLogger(t), Lambdas: testLambdas})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// setup is one project with the example workflow on a fresh database.
func setup(t testing.TB) (*Engine, string) {
	t.Helper()
	root := newProject(t)
	db := storetest.Open(t, filepath.Join(t.TempDir(), "berth.db"))
	return openEngine(t, db, root, "proj-a"), root
}

func wantKind(t testing.TB, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) || e.Remediation == "" {
		t.Fatalf("err %v has no remediation", err)
	}
}

// Evidence that passes each phase of bug_fix_v1.
var (
	phase1OK = map[string]any{"reproduced": true, "failing_test": "src/parser_test.go", "root_cause": "the tokenizer drops the last rune of the input"}
	phase2OK = map[string]any{"tests_passed": 42.0, "tests_failed": 0.0, "files_changed": []any{"src/parser.go"}, "fix_summary": "keep the last rune"}
)
