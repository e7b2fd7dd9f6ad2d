package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/shirou/gopsutil/v4/process"
)

// The scale figures: how the broker's cost grows with projects, live HTTP
// sessions, hosted servers and the size of a project's index. Each group
// runs on its own broker; each row is measured against the group's base
// (the same broker before the units were added), so the cost per unit
// stays flat while growth is linear and rises when it is not.
const (
	scaleProjects = "scale-projects"
	scaleSessions = "scale-sessions"
	scaleServers  = "scale-servers"
	scaleIndex    = "scale-index"
	// scaleBase is the subject of a group's base row.
	scaleBase = "base"
)

// scaleMetrics are the figures of one row.
var scaleMetrics = []string{"rss", "goroutines", "fds", "call-p50", "call-p99"}

// snapshot is the broker's state at one row.
type snapshot struct {
	rss             float64
	goroutines, fds int
	fdsErr          error
	lat             []time.Duration
}

// measure reads the broker's RSS, goroutines (from its pprof listener) and
// open files, and times call (if any) r.o.ScaleCalls times after 5 untimed.
func (r *runner) measure(ctx context.Context, b *broker, call func() error) (snapshot, error) {
	var s snapshot
	if call != nil {
		for i := range 5 + r.o.ScaleCalls {
			t := time.Now()
			if err := call(); err != nil {
				return s, err
			}
			if i >= 5 {
				s.lat = append(s.lat, time.Since(t))
			}
		}
	}
	var err error
	if s.rss, err = rssMiB(ctx, b.pid()); err != nil {
		return s, err
	}
	if s.goroutines, err = b.goroutines(ctx); err != nil {
		return s, err
	}
	s.fds, s.fdsErr = openFiles(ctx, b.pid())
	return s, nil
}

// openFiles counts pid's open file descriptors (/proc/PID/fd on Linux).
func openFiles(ctx context.Context, pid int) (int, error) {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return 0, err
	}
	n, err := p.NumFDsWithContext(ctx)
	return int(n), err
}

// record adds a row of group: subject is the unit count (or scaleBase).
func (r *runner) record(group, subject string, n int, s snapshot) {
	r.rs.add(group, subject, "rss", s.rss, "MiB", n)
	r.rs.add(group, subject, "goroutines", float64(s.goroutines), "goroutines", n)
	if s.fdsErr != nil {
		r.rs.skip(group, subject, "open files unknown here: "+s.fdsErr.Error(), "fds")
	} else {
		r.rs.add(group, subject, "fds", float64(s.fds), "fds", n)
	}
	if len(s.lat) > 0 {
		r.rs.add(group, subject, "call-p50", ms(percentile(s.lat, 50)), "ms", len(s.lat))
		r.rs.add(group, subject, "call-p99", ms(percentile(s.lat, 99)), "ms", len(s.lat))
	}
}

// settle lets a broker's background work after a change end before a figure.
func settle() { time.Sleep(500 * time.Millisecond) }

// row settles, measures b with call (nil: none) and records the row of n
// units (0: a base, named subject).
func (r *runner) row(ctx context.Context, b *broker, group, subject string, n int, call func() error) error {
	settle()
	s, err := r.measure(ctx, b, call)
	if err != nil {
		return err
	}
	r.record(group, subject, n, s)
	return nil
}

// mountIndexed attaches root to b and waits (up to limit) until its index
// is ready; it returns the project's HTTP endpoint.
func mountIndexed(ctx context.Context, b *broker, root string, limit time.Duration) (string, error) {
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return "", fmt.Errorf("mount %s: %w", root, err)
	}
	return resp.URL, waitIndexed(ctx, b.client, resp.ID, limit)
}

func (r *runner) scale(ctx context.Context) error {
	for _, g := range []struct {
		name string
		run  func(context.Context) error
	}{
		{scaleProjects, r.scaleProjects}, {scaleSessions, r.scaleSessions},
		{scaleServers, r.scaleServers}, {scaleIndex, r.scaleIndex},
	} {
		if len(r.o.ScaleGroups) > 0 && !slices.Contains(r.o.ScaleGroups, strings.TrimPrefix(g.name, "scale-")) {
			continue
		}
		if err := g.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	return nil
}

// scaleProjects mounts projects of r.o.Files files up to each count; the
// call is get_server_info on the first project's HTTP port.
func (r *runner) scaleProjects(ctx context.Context) error {
	counts := r.o.ScaleProjects
	most := counts[len(counts)-1]
	r.progress("scale: projects %v of %d files each", counts, r.o.Files)
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "scale-projects-home"), most+4)
	if err != nil {
		return err
	}
	defer b.stop()
	if err := r.row(ctx, b, scaleProjects, scaleBase, 0, nil); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	var first *httpSession
	mounted := 0
	for _, n := range counts {
		for ; mounted < n; mounted++ {
			root, err := makeProject(filepath.Join(r.tmp, "scale-projects"), fmt.Sprintf("p%03d", mounted), r.o.Files, uint64(500+mounted))
			if err != nil {
				return err
			}
			url, err := mountIndexed(ctx, b, root, time.Minute)
			if err != nil {
				return err
			}
			if first == nil {
				if first, err = openHTTPSession(ctx, hc, url); err != nil {
					return err
				}
				defer first.close(context.WithoutCancel(ctx))
			}
		}
		if err := r.row(ctx, b, scaleProjects, strconv.Itoa(n), n, func() error { return first.callTool(ctx, loadTool) }); err != nil {
			return err
		}
	}
	return nil
}

// scaleSessions opens live HTTP sessions (initialized, never closed
// until the end) on one project whose mcp.max_sessions is raised to the
// largest count; the call is get_server_info on a session of its own,
// open since the base row.
func (r *runner) scaleSessions(ctx context.Context) error {
	counts := r.o.ScaleSessions
	most := counts[len(counts)-1]
	r.progress("scale: live HTTP sessions %v (mcp.max_sessions %d)", counts, most+1)
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "scale-sessions-home"), 4)
	if err != nil {
		return err
	}
	defer b.stop()
	root, err := makeProject(r.tmp, "scale-sessions-project", r.o.Files, 7)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf("mcp:\n  max_sessions: %d\n", most+1) // the measuring session too
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	url, err := mountIndexed(ctx, b, root, time.Minute)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer hc.CloseIdleConnections()
	probe, err := openHTTPSession(ctx, hc, url)
	if err != nil {
		return err
	}
	defer probe.close(context.WithoutCancel(ctx))
	call := func() error { return probe.callTool(ctx, loadTool) }
	if err := r.row(ctx, b, scaleSessions, scaleBase, 0, call); err != nil {
		return err
	}
	var live []*httpSession
	defer func() {
		for _, s := range live {
			_ = s.close(context.WithoutCancel(ctx))
		}
	}()
	for _, n := range counts {
		for len(live) < n {
			s, err := openHTTPSession(ctx, hc, url)
			if err != nil {
				return fmt.Errorf("session %d: %w", len(live)+1, err)
			}
			live = append(live, s)
		}
		if err := r.row(ctx, b, scaleSessions, strconv.Itoa(n), n, call); err != nil {
			return err
		}
	}
	// Every session is still there: the first one opened answers.
	if len(live) > 0 {
		if err := live[0].callTool(ctx, loadTool); err != nil {
			return fmt.Errorf("the first of %d live sessions: %w", len(live), err)
		}
	}
	return nil
}

// scaleServers: for each count, a broker whose project declares that many
// server-memory servers (each with its own graph file); the base is the
// broker with the project mounted and no server started yet (they are
// lazy); the row is after a session listed the tools and called each
// server's read_graph; the timed call is the first server's read_graph.
func (r *runner) scaleServers(ctx context.Context) error {
	node, dir, why, err := installHostedServers(ctx, r.src, r.o.Stderr)
	if err != nil {
		return err
	}
	if why != "" {
		for _, n := range append([]int{0}, r.o.ScaleServers...) {
			subject := strconv.Itoa(n)
			if n == 0 {
				subject = scaleBase
			}
			r.rs.skip(scaleServers, subject, why, scaleMetrics...)
		}
		return nil
	}
	r.progress("scale: hosted servers %v (server-memory)", r.o.ScaleServers)
	for _, n := range r.o.ScaleServers {
		if err := r.scaleServersOf(ctx, node, serverScript(dir, "server-memory"), n); err != nil {
			return fmt.Errorf("%d servers: %w", n, err)
		}
	}
	return nil
}

func (r *runner) scaleServersOf(ctx context.Context, node, script string, n int) error {
	name := fmt.Sprintf("scale-servers-%d", n)
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, name+"-home"), 4)
	if err != nil {
		return err
	}
	defer b.stop()
	root, err := makeProject(r.tmp, name+"-project", 5, 9)
	if err != nil {
		return err
	}
	var cfg strings.Builder
	cfg.WriteString("servers:\n")
	for i := range n {
		fmt.Fprintf(&cfg, "  memory%d:\n    command: %q\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n",
			i, node, script, filepath.Join(r.tmp, fmt.Sprintf("%s-graph-%d.jsonl", name, i)))
	}
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte(cfg.String()), 0o644); err != nil {
		return err
	}
	if _, err := b.client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		return fmt.Errorf("approve the servers: %w", err)
	}
	url, err := mountIndexed(ctx, b, root, time.Minute)
	if err != nil {
		return err
	}
	if err := r.row(ctx, b, scaleServers, scaleBase+strconv.Itoa(n), 0, nil); err != nil {
		return err
	}
	hc := &http.Client{Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	s, err := openHTTPSession(ctx, hc, url)
	if err != nil {
		return err
	}
	defer s.close(context.WithoutCancel(ctx))
	// One server at a time: a call starts its lazy server. (A tools/list
	// starts all of them at once; 20 node processes starting together on
	// a busy 2-core machine each missed the handshake's deadline and were
	// restarted together, over and over.)
	for i := range n {
		if err := s.callTool(ctx, fmt.Sprintf("memory%d__read_graph", i)); err != nil {
			return fmt.Errorf("memory%d: %w", i, err)
		}
	}
	if err := waitRunning(ctx, b, root, n, 3*time.Minute); err != nil {
		return err
	}
	return r.row(ctx, b, scaleServers, strconv.Itoa(n), n, func() error { return s.callTool(ctx, "memory0__read_graph") })
}

// waitRunning polls b until n hosted servers of root run (at most limit).
func waitRunning(ctx context.Context, b *broker, root string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	running, states := 0, map[string]int{}
	for time.Now().Before(deadline) {
		list, err := b.client.Servers(ctx, root)
		if err != nil {
			return err
		}
		running, states = 0, map[string]int{}
		for _, p := range list.Projects {
			for _, s := range p.Servers {
				states[fmt.Sprintf("%s (%s)", s.State, s.LastError)]++
				if s.State == api.ServerRunning {
					running++
				}
			}
		}
		if running >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%d of %d hosted servers running after %s: %v", running, n, limit, states)
}

// scaleIndex: for each size, a broker mounts one project of that many
// files (written before) and the mount is timed until the project's index
// is ready; the base is the same broker before the mount; the call is
// get_server_info on that project.
func (r *runner) scaleIndex(ctx context.Context) error {
	r.progress("scale: index build of projects of %v files", r.o.ScaleFiles)
	for _, n := range r.o.ScaleFiles {
		if err := r.scaleIndexOf(ctx, n); err != nil {
			return fmt.Errorf("%d files: %w", n, err)
		}
	}
	return nil
}

func (r *runner) scaleIndexOf(ctx context.Context, n int) error {
	name := fmt.Sprintf("scale-index-%d", n)
	root, err := makeProject(r.tmp, name+"-project", n, uint64(n))
	if err != nil {
		return err
	}
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, name+"-home"), 4)
	if err != nil {
		return err
	}
	defer b.stop()
	if err := r.row(ctx, b, scaleIndex, scaleBase+strconv.Itoa(n), 0, nil); err != nil {
		return err
	}
	start := time.Now()
	url, err := mountIndexed(ctx, b, root, 10*time.Minute)
	if err != nil {
		return err
	}
	r.rs.add(scaleIndex, strconv.Itoa(n), "build", ms(time.Since(start)), "ms", n)
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	s, err := openHTTPSession(ctx, hc, url)
	if err != nil {
		return err
	}
	defer s.close(context.WithoutCancel(ctx))
	return r.row(ctx, b, scaleIndex, strconv.Itoa(n), n, func() error { return s.callTool(ctx, loadTool) })
}

// scaleGroup describes one group of the scale table.
type scaleGroup struct {
	bench, what, unit string
	per               int // units in one "per" of the cost column (1, or 1,000 files)
	counts            func(o Options) []int
	perBase           bool // each count has its own base (scaleBase+count)
}

var scaleGroups = []scaleGroup{
	{bench: scaleProjects, what: "projects (%d files each)", unit: "project", per: 1, counts: func(o Options) []int { return o.ScaleProjects }},
	{bench: scaleSessions, what: "live HTTP sessions on one project (mcp.max_sessions raised to %d)", unit: "session", per: 1, counts: func(o Options) []int { return o.ScaleSessions }},
	{bench: scaleServers, what: "hosted servers (server-memory, running)", unit: "server", per: 1, counts: func(o Options) []int { return o.ScaleServers }, perBase: true},
	{bench: scaleIndex, what: "files in one project's index", unit: "1k files", per: 1000, counts: func(o Options) []int { return o.ScaleFiles }, perBase: true},
}

// writeScaleTable prints the scale figures: each row's absolute figures
// and, beside them, what one unit added over the group's base.
func writeScaleTable(w io.Writer, rs *results, o Options) {
	fmt.Fprintln(w, "| rows | count | broker RSS | goroutines | open fds | call p50 / p99 | index build | RSS per unit | goroutines per unit | fds per unit | build per unit |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	val := func(bench, subject, metric string) (float64, bool) {
		res, ok := rs.get(bench, subject, metric)
		return res.Value, ok
	}
	for _, g := range scaleGroups {
		if len(o.ScaleGroups) > 0 && !slices.Contains(o.ScaleGroups, strings.TrimPrefix(g.bench, "scale-")) {
			continue
		}
		what := g.what
		if strings.Contains(what, "%d") {
			arg := o.Files
			if g.bench == scaleSessions {
				counts := g.counts(o)
				arg = counts[len(counts)-1] + 1
			}
			what = fmt.Sprintf(what, arg)
		}
		if res, found := rs.find(g.bench, scaleBase, "rss"); found && res.Skipped != "" {
			fmt.Fprintf(w, "| %s | - | skipped: %s |  |  |  |  |  |  |  |  |\n", what, res.Skipped)
			continue
		}
		if !g.perBase {
			fmt.Fprintf(w, "| %s | base | %s | %s | %s |  |  |  |  |  |  |\n", what,
				cell(rs, g.bench, scaleBase, "rss"), cell(rs, g.bench, scaleBase, "goroutines"), cell(rs, g.bench, scaleBase, "fds"))
		}
		prev, prevUnits := "", 0.0 // the row above; the base for the first row
		for _, n := range g.counts(o) {
			subject := strconv.Itoa(n)
			if prev == "" {
				prev = scaleBase
				if g.perBase {
					prev += subject
				}
			}
			units := float64(n) / float64(g.per)
			per := func(metric, unit string) string {
				v, ok1 := val(g.bench, subject, metric)
				b, ok2 := val(g.bench, prev, metric)
				if metric == "build" && prevUnits == 0 {
					b, ok2 = 0, true
				}
				if !ok1 || !ok2 || units == prevUnits {
					return "-"
				}
				return formatValue((v-b)/(units-prevUnits), unit)
			}
			build, buildPer := "", ""
			if v, ok := val(g.bench, subject, "build"); ok {
				build, buildPer = formatValue(v, "ms"), per("build", "ms")
			}
			latency := cell(rs, g.bench, subject, "call-p50") + " / " + cell(rs, g.bench, subject, "call-p99")
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", what, n,
				cell(rs, g.bench, subject, "rss"), cell(rs, g.bench, subject, "goroutines"), cell(rs, g.bench, subject, "fds"),
				latency, build, per("rss", "MiB"), per("goroutines", "goroutines"), per("fds", "fds"), buildPer)
			prev, prevUnits = subject, units
		}
	}
	fmt.Fprintf(w, "\nper unit: what each unit added since the row above, (row - row above) / (units - units above), the first row against the base; a unit is one project, session or server, or 1,000 files. Flat per-unit columns mean linear growth; rising ones, faster than linear. The projects rows run on one broker, the sessions rows on another; the hosted servers and the index sizes each on a broker of their own (their base: that broker before the servers started or the project mounted). Goroutines from the broker's pprof listener, open fds from /proc/PID/fd. The call: get_server_info on an HTTP session of the row's project (hosted servers: the first server's read_graph), %d timed per row after 5 untimed.\n", o.ScaleCalls)
}
