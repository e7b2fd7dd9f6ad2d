package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Result is one measured figure: one JSON line of the raw output.
type Result struct {
	Run     string  `json:"run"`     // start of the run, RFC 3339 UTC
	Bench   string  `json:"bench"`   // warm-attach, cold-start, hop, search, scale, memory, load
	Subject string  `json:"subject"` // berth, mcp-remote, bleve, direct-http, ...
	Metric  string  `json:"metric"`  // p50, p99, calls-per-s, ...
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	N       int     `json:"n,omitempty"`       // samples behind the figure
	Skipped string  `json:"skipped,omitempty"` // why there is no figure
}

// results collects the figures of one run.
type results struct {
	run  string
	list []Result
}

func (rs *results) add(bench, subject, metric string, v float64, unit string, n int) {
	rs.list = append(rs.list, Result{Run: rs.run, Bench: bench, Subject: subject, Metric: metric, Value: v, Unit: unit, N: n})
}

func (rs *results) skip(bench, subject, why string, metrics ...string) {
	for _, m := range metrics {
		rs.list = append(rs.list, Result{Run: rs.run, Bench: bench, Subject: subject, Metric: m, Skipped: why})
	}
}

// get is the latest figure of bench, subject and metric; false when there
// is none or it was skipped.
func (rs *results) get(bench, subject, metric string) (Result, bool) {
	r, found := rs.find(bench, subject, metric)
	return r, found && r.Skipped == ""
}

// find is the latest record of bench, subject and metric, skipped or not.
func (rs *results) find(bench, subject, metric string) (Result, bool) {
	for _, r := range slices.Backward(rs.list) {
		if r.Bench == bench && r.Subject == subject && r.Metric == metric {
			return r, true
		}
	}
	return Result{}, false
}

// row is one line of the printed table.
type row struct {
	label         string
	bench, metric string
	peer          string // subject of the peer column ("" = none)
	target        string
	met           func(rs *results) (bool, bool) // (met, known)
	berthSubject  string                         // subject of the Berth column (default berth)
	node          bool                           // needs Node.js (skipped without it)
	optional      bool                           // printed only when the run has its figure (--baseline)
}

func (r row) subject() string {
	if r.berthSubject != "" {
		return r.berthSubject
	}
	return "berth"
}

// rows are the table's lines for a mode.
func rows(mode string) []row {
	var out []row
	if mode == "e2e" || mode == "all" {
		out = append(out,
			row{label: "warm attach p50 (shim start to tools/list answer), berth-shim as go build makes it (cgo)", bench: "warm-attach", metric: "p50", peer: peerName,
				target: ">= 10x faster than peer", met: func(rs *results) (bool, bool) {
					b, ok1 := rs.get("warm-attach", "berth", "p50")
					p, ok2 := rs.get("warm-attach", peerName, "p50")
					if !ok1 || !ok2 {
						return false, false
					}
					return p.Value >= 10*b.Value, true
				}},
			row{label: "warm attach p99", bench: "warm-attach", metric: "p99", peer: peerName},
			row{label: "warm attach: failed launches", bench: "warm-attach", metric: "failed-launches", peer: peerName},
			row{label: "warm attach p50, berth-shim as the README installs it (CGO_ENABLED=0)", bench: "warm-attach", metric: "p50", berthSubject: staticSubject,
				target: "<= 20 ms", met: func(rs *results) (bool, bool) {
					b, ok := rs.get("warm-attach", staticSubject, "p50")
					return ok && b.Value <= 20, ok
				}},
			row{label: "cold start p50 (no broker, 1k-file index on disk)", bench: "cold-start", metric: "p50",
				target: "<= 500 ms", met: atMost("cold-start", "p50", 500)},
			row{label: "small tool call p50, direct on the project's HTTP port", bench: "hop", metric: "call-p50", berthSubject: "direct-http", peer: subjectFloor},
			row{label: "the same call / a minimal net/http JSON-RPC handler's, same client, same rounds", bench: "hop", metric: "vs-floor-p50", berthSubject: "direct-http",
				target: "<= 3x", met: func(rs *results) (bool, bool) {
					r, ok := rs.get("hop", "direct-http", "vs-floor-p50")
					return ok && r.Value <= 3, ok
				}},
			row{label: "the floor's call p50 with its handler in the bench's own process (no second process to wake)", bench: "hop", metric: "call-p50", berthSubject: subjectFloorInProcess},
			row{label: "small tool call p50 through the stdio bridge", bench: "hop", metric: "call-p50", peer: peerName},
			row{label: "forwarding hop p50 (bridge minus direct)", bench: "hop", metric: "added-p50", peer: peerName,
				target: "<= 0.3 ms and <= 1/5 of peer", met: func(rs *results) (bool, bool) {
					b, ok1 := rs.get("hop", "berth", "added-p50")
					p, ok2 := rs.get("hop", peerName, "added-p50")
					if !ok1 || !ok2 {
						return false, false
					}
					return b.Value <= 0.3 && b.Value <= p.Value/5, true
				}},
			row{label: "search query p50, each engine right after its own build", bench: "search", metric: "query-p50", peer: "bleve"},
			row{label: "search query p99, each engine right after its own build", bench: "search", metric: "query-p99", peer: "bleve"},
			row{label: "search query p50, both engines built, timed in turn round by round", bench: "search", metric: "query-p50-" + inTurn, peer: "bleve",
				target: "<= 1/4 of bleve", met: ratioAtMost("search", "query-p50-"+inTurn, 0.25)},
			row{label: "search query p99, both engines built, timed in turn round by round", bench: "search", metric: "query-p99-" + inTurn, peer: "bleve",
				target: "<= bleve's", met: ratioAtMost("search", "query-p99-"+inTurn, 1)},
			row{label: "search index build", bench: "search", metric: "build", peer: "bleve",
				target: ">= 2x faster than bleve", met: ratioAtMost("search", "build", 0.5)},
			row{label: "search reopen unchanged", bench: "search", metric: "reopen", peer: "bleve",
				target: "<= 100 ms", met: atMost("search", "reopen", 100)},
			row{label: "search index size", bench: "search", metric: "index-size", peer: "bleve"},
		)
		out = append(out, hostedRows()...)
	}
	if mode == "hosted" {
		out = append(out, hostedRows()...)
	}
	if mode == worktreesBench {
		out = append(out, worktreesRows()...)
	}
	if mode == "hostile" || mode == "all" {
		out = append(out, hostileRows()...)
	}
	if mode == "load" || mode == "all" {
		out = append(out,
			row{label: "broker idle RSS (no project)", bench: "memory", metric: "idle-rss"},
			row{label: "RSS per idle project", bench: "memory", metric: "per-project-rss",
				target: "<= 1 MiB", met: atMost("memory", "per-project-rss", 1)},
			row{label: "mount time per project p50", bench: "scale", metric: "mount-p50"},
			row{label: "mount time per project max", bench: "scale", metric: "mount-max"},
			row{label: "broker RSS, all projects mounted", bench: "scale", metric: "rss",
				target: "<= 80 MiB with 50 projects", met: func(rs *results) (bool, bool) {
					// The target is for 50 projects (--projects): another
					// count has no verdict.
					r, ok := rs.get("scale", "berth", "rss")
					return ok && r.Value <= 80, ok && r.N == 50
				}},
			row{label: "load: get_server_info calls/s", bench: "load", metric: "calls-per-s",
				target: ">= 2,000", met: func(rs *results) (bool, bool) {
					r, ok := rs.get("load", "berth", "calls-per-s")
					return ok && r.Value >= 2000, ok
				}},
			row{label: "load: call p50", bench: "load", metric: "p50"},
			row{label: "load: call p99", bench: "load", metric: "p99"},
			row{label: "load: errors", bench: "load", metric: "errors", target: "0", met: atMost("load", "errors", 0)},
			row{label: "load: broker RSS peak", bench: "load", metric: "rss-peak", target: "<= 150 MiB", met: atMost("load", "rss-peak", 150)},
			row{label: "goroutines before load", bench: "load", metric: "goroutines-before"},
			row{label: "goroutines after the sessions end", bench: "load", metric: "goroutines-after",
				target: "back to before", met: func(rs *results) (bool, bool) {
					b, ok1 := rs.get("load", "berth", "goroutines-before")
					a, ok2 := rs.get("load", "berth", "goroutines-after")
					return ok1 && ok2 && a.Value <= b.Value, ok1 && ok2
				}},
		)
	}
	return out
}

func atMost(bench, metric string, limit float64) func(rs *results) (bool, bool) {
	return func(rs *results) (bool, bool) {
		r, ok := rs.get(bench, "berth", metric)
		return ok && r.Value <= limit, ok
	}
}

// ratioAtMost: Berth's figure divided by the peer's is at most limit.
func ratioAtMost(bench, metric string, limit float64) func(rs *results) (bool, bool) {
	return func(rs *results) (bool, bool) {
		b, ok1 := rs.get(bench, "berth", metric)
		p, ok2 := rs.get(bench, "bleve", metric)
		if !ok1 || !ok2 || p.Value == 0 {
			return false, false
		}
		return b.Value/p.Value <= limit, true
	}
}

// cell formats a figure, or why it is missing.
func cell(rs *results, bench, subject, metric string) string {
	r, found := rs.find(bench, subject, metric)
	switch {
	case !found:
		return "-"
	case r.Skipped != "":
		return "skipped: " + r.Skipped
	}
	return formatValue(r.Value, r.Unit)
}

func formatValue(v float64, unit string) string {
	switch {
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f %s", v, unit)
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f %s", v, unit)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f %s", v, unit)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.2f %s", v, unit)
	default:
		return fmt.Sprintf("%.3f %s", v, unit)
	}
}

// writeTable prints the markdown table of mode.
func writeTable(w io.Writer, rs *results, mode string) {
	fmt.Fprintln(w, "| measure | Berth | peer | target | met |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows(mode) {
		if _, found := rs.find(r.bench, r.subject(), r.metric); r.optional && !found {
			continue
		}
		peer := ""
		if r.peer != "" {
			peer = r.peer + ": " + cell(rs, r.bench, r.peer, r.metric)
		}
		met := ""
		if r.met != nil {
			ok, known := r.met(rs)
			switch {
			case !known:
				met = "n/a"
			case ok:
				met = "yes"
			default:
				met = "**no**"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.label, cell(rs, r.bench, r.subject(), r.metric), peer, r.target, met)
	}
}

// writeRaw writes the figures as JSON lines to dir/latest.jsonl and in Go
// benchmark format (for benchstat) to dir/latest.txt, each with a dated
// copy, and returns the paths.
func writeRaw(dir string, rs *results, started time.Time, machine string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var jl, txt strings.Builder
	for _, r := range rs.list {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		jl.Write(b)
		jl.WriteByte('\n')
	}
	fmt.Fprintf(&txt, "# berth-bench, %s\n# %s\n", rs.run, machine)
	for _, r := range rs.list {
		if r.Skipped == "" {
			fmt.Fprintf(&txt, "Benchmark%s/%s/%s 1 %g %s\n", title(r.Bench), r.Subject, r.Metric, r.Value, strings.ReplaceAll(r.Unit, " ", "-"))
		}
	}
	stamp := started.UTC().Format("2006-01-02T150405Z")
	var paths []string
	for _, f := range []struct{ name, body string }{
		{"latest.jsonl", jl.String()}, {stamp + ".jsonl", jl.String()},
		{"latest.txt", txt.String()}, {stamp + ".txt", txt.String()},
	} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func title(s string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(s, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// ReadResults reads a JSON lines file written by the bench.
func ReadResults(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Result
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
