//go:build hostilebench

package workflow

import (
	"context"
	"testing"

	"github.com/berth-dev/berth/store"
)

// The slowest gate of this tree: a pattern is bounded before it runs, so a
// lambda that computes until its child's CPU limit stops it.
const hbSlowGate = "checkpoint: {strict: true}\nevidence_schema:\n  s: {type: string, required: true}\ncross_field_validation:\n  - rule: \"lambda e: sum(range(1000000000)) > 0\"\n"

var hbSlowEvidence = map[string]any{"s": "x"}

func hbOpen(tb testing.TB, db *store.DB, root, id string) *Engine {
	e, err := Open(context.Background(), Options{Root: root, DB: db, ProjectID: id, Logger: testLogger(tb), Lambdas: testLambdas})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}
