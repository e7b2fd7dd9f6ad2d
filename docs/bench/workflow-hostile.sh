#!/bin/sh
# Measures the workflow engine's hostile inputs (BenchmarkHostileInputs,
# project/workflow/hostilebench_test.go) on an older tree and on this one,
# one after the other, and prints each figure with its ratio.
#   docs/bench/workflow-hostile.sh BEFORE_COMMIT [AFTER_COMMIT]
# The older tree runs the same benchmark with its own way of opening an
# engine and its slowest gate (a counted-repetition pattern over 60 KB).
# Both run under an address-space limit of 8 GiB.
set -eu
before=$1
after=${2:-HEAD}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in before after; do
	rev=$before
	[ "$side" = after ] && rev=$after
	mkdir "$work/$side"
	git -C "$repo" archive "$rev" | tar -x -C "$work/$side"
	cp "$repo/project/workflow/hostilebench_test.go" "$work/$side/project/workflow/"
done
if [ ! -f "$work/before/project/workflow/workflowtest/budget.go" ]; then
	cp "$repo"/project/workflow/workflowtest/budget.go "$repo"/project/workflow/workflowtest/race.go \
		"$repo"/project/workflow/workflowtest/norace.go "$work/before/project/workflow/workflowtest/"
fi
if ! grep -q 'Lambdas ' "$work/before/project/workflow/engine.go"; then
	cat >"$work/before/project/workflow/hostilebench_open_test.go" <<'GO'
//go:build hostilebench

package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/berth-dev/berth/store"
)

const hbSlowGate = "checkpoint: {strict: true}\nevidence_schema:\n  s: {type: string, required: true, pattern: \".{1000}.{1000}.{1000}z\"}\n"

var hbSlowEvidence = map[string]any{"s": strings.Repeat("a", 60000)}

func hbOpen(tb testing.TB, db *store.DB, root, id string) *Engine {
	e, err := Open(context.Background(), Options{Root: root, DB: db, ProjectID: id, Logger: testLogger(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}
GO
else
	cp "$repo/project/workflow/hostilebench_open_test.go" "$work/before/project/workflow/"
fi
for side in before after; do
	(cd "$work/$side" && ulimit -v 8388608 &&
		go test ./project/workflow -tags hostilebench -count 1 -run '^$' -bench HostileInputs -benchtime 1x) |
		tee "$work/$side.txt" | grep -v '^ok\|^PASS\|^goos\|^goarch\|^pkg\|^cpu'
done
echo "# ratios: after / before"
awk '
FNR == 1 { side++ }
/^BenchmarkHostileInputs\// {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkHostileInputs\//, "", name)
	for (i = 3; i < NF; i += 2) { v[side, name, $(i+1)] = $i; units[$(i+1)] = 1 }
	names[name] = 1
}
END {
	for (n in names) for (u in units) if (u != "ns/op" && ((1, n, u) in v))
		printf "%-40s %-9s before %10.1f  after %9.1f  ratio %s\n", n, u, v[1, n, u], v[2, n, u],
			(v[1, n, u] > 0 ? sprintf("%.4f", v[2, n, u] / v[1, n, u]) : "-")
}' "$work/before.txt" "$work/after.txt" | sort
