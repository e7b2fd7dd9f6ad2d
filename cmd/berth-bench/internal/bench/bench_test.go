package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// TestBenchSmoke runs every benchmark at tiny sizes against real processes
// (the package's test build of berth and berth-shim, and berth-shim built
// without cgo from the source tree) and checks that the output has every
// row and parses, the rows of --baseline (the same test build as the other
// build) too; it asserts no timing.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brokers and runs go test -bench")
	}
	t.Parallel()
	npmServers(t)
	out := t.TempDir()
	// The documented command builds berth and berth-shim from the source
	// tree, and the shim again without cgo. Here the tests' build (linked
	// once for this package's tests) stands in for the first two; the
	// static shim is built from this source tree as that command builds it.
	src := sourceTree()
	if src == "" {
		t.Fatal("the test runs inside the source tree, but sourceTree found none")
	}
	static, err := buildStaticShim(context.Background(), src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := parseArgs(t, "all", "--quick", "--no-peer", "--keep", "--bin", brokertest.Binaries(t), "--baseline", brokertest.Binaries(t), "--out", out)
	o.staticShim = static
	stdout, stderr := runOptions(t, o)

	noneLeft(t, stderr)

	got, err := ReadResults(filepath.Join(out, "latest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rs := &results{list: got}
	// The hosted-server rows need Node.js: without it (outside CI) they
	// must say so.
	_, err = exec.LookPath("node")
	noNode := err != nil && !ci.Required()
	for _, r := range rows("all") {
		if r.optional { // --baseline's rows: below
			continue
		}
		if r.node && noNode {
			if res, _ := rs.get(r.bench, r.subject(), r.metric); !strings.HasPrefix(res.Skipped, "node is not installed") {
				t.Errorf("row %q without node: %+v, want skipped", r.label, res)
			}
			continue
		}
		res, ok := rs.get(r.bench, r.subject(), r.metric)
		if !ok {
			t.Errorf("row %q: no figure for %s/%s/%s (%+v)", r.label, r.bench, r.subject(), r.metric, res)
		}
		if r.peer == "" {
			continue
		}
		res, ok = rs.get(r.bench, r.peer, r.metric)
		switch {
		case r.peer == peerName && res.Skipped != "--no-peer":
			t.Errorf("row %q: peer %s = %+v, want skipped: --no-peer", r.label, r.peer, res)
		case r.peer != peerName && !ok:
			t.Errorf("row %q: no figure for peer %s", r.label, r.peer)
		}
		if !strings.Contains(stdout.String(), "| "+r.label+" |") {
			t.Errorf("the printed table has no row %q:\n%s", r.label, stdout.String())
		}
	}
	// --baseline's rows have figures, and the ratios are figures too.
	for _, r := range rows("hosted") {
		if !r.optional || noNode {
			continue
		}
		if res, ok := rs.get(r.bench, r.subject(), r.metric); !ok || res.Value <= 0 {
			t.Errorf("row %q: %+v", r.label, res)
		}
		if !strings.Contains(stdout.String(), "| "+r.label+" |") {
			t.Errorf("the printed table has no row %q:\n%s", r.label, stdout.String())
		}
	}
	for _, r := range got {
		if r.Run == "" || r.Bench == "" || r.Subject == "" || r.Metric == "" || (r.Skipped == "" && r.Unit == "") {
			t.Errorf("incomplete record %+v", r)
		}
	}
	if errs, _ := rs.get("load", "berth", "errors"); errs.Value != 0 {
		t.Errorf("the load saw %v errors:\n%s", errs.Value, stderr.String())
	}

	for _, ext := range []string{"jsonl", "txt"} {
		dated, err := filepath.Glob(filepath.Join(out, "20*."+ext))
		if err != nil || len(dated) != 1 {
			t.Errorf("dated copy of latest.%s: %v %v", ext, dated, err)
		}
	}
	txt, err := os.ReadFile(filepath.Join(out, "latest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(txt))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || !strings.HasPrefix(f[0], "Benchmark") || f[1] != "1" {
			t.Errorf("latest.txt line %q is not in Go benchmark format", line)
			continue
		}
		if _, err := strconv.ParseFloat(f[2], 64); err != nil {
			t.Errorf("latest.txt line %q: %v", line, err)
		}
		lines++
	}
	if lines == 0 {
		t.Error("latest.txt has no figures")
	}
}

// npmServers installs the source tree's hosted npm servers (where Node.js
// is) before a run that starts them: the smoke tests run beside each
// other, and each run would otherwise install them into the user cache
// on its own, into the same folder (installLocked).
func npmServers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err == nil {
		brokertest.NPMServer(t, "server-memory")
	}
}

// noneLeft checks that every process a --keep run started is gone: none
// runs with a home in its kept temporary directory (named in its
// progress), which it removes afterwards.
func noneLeft(t *testing.T, progress *bytes.Buffer) {
	t.Helper()
	_, kept, ok := strings.Cut(progress.String(), "bench: kept ")
	if !ok {
		t.Fatalf("no kept directory in the progress:\n%s", progress.String())
	}
	kept = strings.TrimSpace(kept)
	t.Cleanup(func() { os.RemoveAll(kept) })
	if left := brokertest.Processes(t, func(_, home string) bool { return strings.HasPrefix(home, kept+string(filepath.Separator)) }); len(left) > 0 {
		t.Errorf("processes left running with a home in %s: %v", kept, left)
	}
}

// runBench runs berth-bench with args (at most 5 minutes) and returns
// what it printed and its progress.
func runBench(t *testing.T, args ...string) (stdout, stderr *bytes.Buffer) {
	t.Helper()
	return runOptions(t, parseArgs(t, args...))
}

// parseArgs is ParseArgs(args), which must accept them.
func parseArgs(t *testing.T, args ...string) Options {
	t.Helper()
	o, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runOptions runs o as runBench runs its arguments.
func runOptions(t *testing.T, o Options) (stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	o.Stdout, o.Stderr = stdout, stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := RunOptions(ctx, o); err != nil {
		t.Fatalf("bench: %v\nprogress:\n%s", err, stderr.String())
	}
	return stdout, stderr
}

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs(nil)
	if err != nil || o.Mode != "all" || o.Launches != 50 || o.Projects != 50 || o.Sessions != 20 || o.SearchFiles != 10000 {
		t.Errorf("defaults = %+v, %v", o, err)
	}
	if o, err := ParseArgs([]string{"load"}); err != nil || o.Mode != "load" {
		t.Errorf("load = %+v, %v", o, err)
	}
	if _, err := ParseArgs([]string{"--help"}); err == nil || !strings.Contains(err.Error(), "--no-peer") {
		t.Errorf("--help = %v, want the flags", err)
	}
	for _, bad := range [][]string{
		{"speed"}, {"load", "e2e"}, {"--launches", "0"}, {"--sessions", "-3"}, {"--projects", "501"},
		{"--duration", "0s"}, {"--duration", "1h"}, {"--nope"}, {"hosted", "--baseline", t.TempDir()},
		{"scale", "--scale-projects", "10,5"}, {"scale", "--scale-sessions", "0"}, {"scale", "--scale-servers", "51"},
		{"scale", "--scale-files", ""}, {"scale", "--scale-calls", "0"}, {"--gateway-calls", "0"}, {"scale", "--scale-groups", "memory"},
		{"worktrees", "--worktrees", "1"}, {"worktrees", "--worktree-files", "0"},
	} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

// TestScaleSmoke runs the scale figures at tiny sizes: every row of every
// group has its figures, the table prints them, and no process the run
// started is left; it asserts no timing.
func TestScaleSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brokers and npm servers")
	}
	t.Parallel()
	npmServers(t)
	out := t.TempDir()
	stdout, stderr := runBench(t, "scale", "--quick", "--keep", "--bin", brokertest.Binaries(t), "--out", out)
	noneLeft(t, stderr)
	got, err := ReadResults(filepath.Join(out, "latest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rs := &results{list: got}
	o, err := ParseArgs([]string{"scale", "--quick"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.LookPath("node")
	noNode := err != nil && !ci.Required()
	for _, g := range scaleGroups {
		if g.bench == scaleServers && noNode {
			if res, _ := rs.find(g.bench, scaleBase, "rss"); !strings.HasPrefix(res.Skipped, "node is not installed") {
				t.Errorf("%s without node: %+v, want skipped", g.bench, res)
			}
			continue
		}
		for _, n := range g.counts(o) {
			subject := strconv.Itoa(n)
			metrics := scaleMetrics
			if g.bench == scaleIndex {
				metrics = append(slices.Clone(metrics), "build")
			}
			for _, m := range metrics {
				if res, ok := rs.get(g.bench, subject, m); !ok || (m != "fds" && res.Value <= 0) {
					t.Errorf("%s %s %s: %+v", g.bench, subject, m, res)
				}
			}
			if !strings.Contains(stdout.String(), fmt.Sprintf(" | %d | ", n)) {
				t.Errorf("the printed table has no row of %d for %s:\n%s", n, g.bench, stdout.String())
			}
		}
	}
	// The sessions rows ran with mcp.max_sessions raised, and say so.
	if !strings.Contains(stdout.String(), fmt.Sprintf("mcp.max_sessions raised to %d", o.ScaleSessions[len(o.ScaleSessions)-1]+1)) {
		t.Errorf("the table does not say mcp.max_sessions was raised:\n%s", stdout.String())
	}
}

func TestParseSearchBench(t *testing.T) {
	const out = `goos: linux
BenchmarkEngines/10k/berth-2   	       1	        75.33 build-ms	       103.8 edit-max-ms	         1.000 index-MB	         0.8820 query-p50-us	 0 ns/op
BenchmarkEngines/10k/bleve-fields-2         	       1	       117.2 build-ms	         12.84 query-p50-us
BenchmarkEngines/10k/naive         	       1	       4.396 build-ms
BenchmarkEngines/10k/in-turn-2     	       1	        14.50 berth-query-p50-us	      1310 berth-query-p99-us	        61.20 bleve-query-p50-us	      3020 bleve-query-p99-us	 0 ns/op
PASS
`
	rs := &results{}
	n, err := parseSearchBench(strings.NewReader(out), rs)
	if err != nil || n != 11 {
		t.Fatalf("parsed %d figures, %v", n, err)
	}
	for _, c := range []struct {
		subject, metric string
		want            float64
	}{
		{"berth", "build", 75.33}, {"berth", "query-p50", 0.882}, {"berth", "index-size", 1},
		{"bleve-fields", "query-p50", 12.84}, {"naive", "build", 4.396},
		{"berth", "query-p50-in-turn", 14.5}, {"berth", "query-p99-in-turn", 1310},
		{"bleve", "query-p50-in-turn", 61.2}, {"bleve", "query-p99-in-turn", 3020},
	} {
		if r, ok := rs.get("search", c.subject, c.metric); !ok || r.Value != c.want {
			t.Errorf("%s %s = %+v, want %v", c.subject, c.metric, r, c.want)
		}
	}
	if _, err := parseSearchBench(strings.NewReader("BenchmarkEngines/1k/berth-2 1 x build-ms\n"), rs); err == nil {
		t.Error("a malformed figure was accepted")
	}
}

// TestWorktreesSmoke runs the worktrees figures at tiny sizes: every row
// has a figure and the printed table has every line; it asserts no timing.
func TestWorktreesSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brokers and runs git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	out := t.TempDir()
	stdout, stderr := runBench(t, "worktrees", "--quick", "--keep", "--bin", brokertest.Binaries(t), "--out", out)
	noneLeft(t, stderr)
	got, err := ReadResults(filepath.Join(out, "latest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rs := &results{list: got}
	for _, r := range worktreesRows() {
		// CPU time is counted in clock ticks: at these sizes a step may
		// take less than one.
		cpu := strings.Contains(r.metric, "cpu")
		if res, ok := rs.get(r.bench, r.subject(), r.metric); !ok || res.Value < 0 || res.Value == 0 && !cpu {
			t.Errorf("row %q: %+v", r.label, res)
		}
		if !strings.Contains(stdout.String(), "| "+r.label+" | ") {
			t.Errorf("the printed table lacks %q:\n%s", r.label, stdout.String())
		}
	}
}
