package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// searchMetrics maps the search benchmark's units to the bench's names.
var searchMetrics = map[string]struct{ metric, unit string }{
	"build-ms":          {"build", "ms"},
	"reopen-ms":         {"reopen", "ms"},
	"reopen-files-read": {"reopen-files-read", "files"},
	"index-MB":          {"index-size", "MB"},
	"query-p50-us":      {"query-p50", "us"},
	"query-p99-us":      {"query-p99", "us"},
	"heap-peak-MB":      {"heap-peak", "MB"},
	"heap-live-MB":      {"heap-live", "MB"},
	"edit-p50-ms":       {"edit-p50", "ms"},
	"edit-max-ms":       {"edit-max", "ms"},
}

// search runs the engine benchmarks of project/search (Berth vs bleve on
// a generated corpus) with `go test` in the source tree: bleve is a test
// dependency and never links into berth.
func (r *runner) search(ctx context.Context) error {
	if r.src == "" {
		r.rs.skip("search", "berth", "needs the Berth source tree (run from a clone)", "query-p50", "query-p99", "query-p50-"+inTurn, "query-p99-"+inTurn, "build", "reopen", "index-size")
		return nil
	}
	r.progress("search: go test -bench Engines on %d files (Berth vs bleve)", r.o.SearchFiles)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "./project/search", "-run", "^$", "-bench", "^BenchmarkEngines$",
		"-benchtime", "1x", "-timeout", "30m", "-args", "-files", strconv.Itoa(r.o.SearchFiles))
	cmd.Dir = r.src
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go test -bench Engines: %w\n%s", err, out.String())
	}
	n, err := parseSearchBench(strings.NewReader(out.String()), r.rs)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("go test -bench Engines printed no figures:\n%s", out.String())
	}
	return nil
}

// inTurn is the sub-benchmark that times Berth's and bleve's queries in
// turn, round by round; its figures are the metrics' with this suffix.
const inTurn = "in-turn"

// parseSearchBench reads `BenchmarkEngines/<corpus>/<engine>-N 1 v unit ...`
// lines into rs and returns how many figures it read; the in-turn line's
// `v berth-query-p50-us` is berth's query-p50-in-turn.
func parseSearchBench(in io.Reader, rs *results) (int, error) {
	n := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkEngines/") {
			continue
		}
		parts := strings.Split(f[0], "/")
		if len(parts) != 3 {
			continue
		}
		engine := parts[2]
		if i := strings.LastIndexByte(engine, '-'); i > 0 {
			if _, err := strconv.Atoi(engine[i+1:]); err == nil {
				engine = engine[:i] // the GOMAXPROCS suffix
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			subject, unit, suffix := engine, f[i+1], ""
			if engine == inTurn {
				// <engine>-query-p50-us: that engine's queries timed in
				// turn with the other's.
				s, u, ok := strings.Cut(unit, "-")
				if !ok {
					continue
				}
				subject, unit, suffix = s, u, "-"+inTurn
			}
			m, ok := searchMetrics[unit]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return n, fmt.Errorf("search bench line %q: %w", sc.Text(), err)
			}
			rs.add("search", subject, m.metric+suffix, v, m.unit, 1)
			n++
		}
	}
	return n, sc.Err()
}
