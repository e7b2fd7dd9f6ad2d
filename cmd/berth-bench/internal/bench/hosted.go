package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/berth-dev/berth/api"
)

// The hosted-server figures run the real npm MCP servers of the tests,
// installed from their lock file in the source tree.
const (
	hostedLockDir = "broker/hosted/testdata/servers"
	hostedBench   = "hosted"
	// Subjects of the hosted figures.
	subjectHTTP    = "berth"        // through the project's HTTP port (a sub-agent)
	subjectShim    = "berth-shim"   // through berth-shim (an IDE window)
	subjectDirect  = "direct-stdio" // a stdio connection to the server itself
	subjectStarted = "started"      // the server started for the window, as IDEs do
	subjectCopies  = "one-copy-each"
	subjectOwn     = "berth-own-tool" // Berth's own current_date on the same port: what the HTTP transport costs
	// With --baseline: the same HTTP calls on a broker of other binaries.
	subjectBaseline    = "baseline"
	subjectBaselineOwn = "baseline-own-tool"
	// The baseline's berth-shim: its hosted server gets the calls of a
	// window too, as this build's does, so that neither is the warmer.
	subjectBaselineShim = "baseline-shim"
)

// hostedMetrics are every figure of the hosted bench, for a skip.
var hostedMetrics = map[string][]string{
	subjectHTTP:    {"call-p50", "added-p50", "forward-p50", "first-answer-p50", "rss"},
	subjectShim:    {"call-p50", "added-p50", "first-answer-p50", "rss-with-shims"},
	subjectDirect:  {"call-p50"},
	subjectOwn:     {"call-p50", "vs-floor-p50"},
	subjectFloor:   {"call-p50"},
	subjectStarted: {"first-answer-p50"},
	subjectCopies:  {"rss"},
}

func (r *runner) skipHosted(why string) {
	for subject, metrics := range hostedMetrics {
		r.rs.skip(hostedBench, subject, why, metrics...)
	}
	r.skipGateway(why)
}

// installHostedServers returns node and the folder holding the locked npm
// servers' node_modules (see installLocked).
func installHostedServers(ctx context.Context, src string, progress io.Writer) (node, dir, why string, err error) {
	return installLocked(ctx, src, hostedLockDir, "hosted", installed, progress)
}

// installLocked returns node and the folder holding the node_modules of
// the npm lock file in the source tree's lockDir: the tree's own when the
// tests (or .ci/run) installed them there, else a copy of lockDir's files
// in the user cache (cacheName plus a hash of the lock), installed with
// npm ci on first use (the bench never installs into the repository).
// ok tells whether a folder holds what is needed. why is set instead when
// the figures cannot run.
func installLocked(ctx context.Context, src, lockDir, cacheName string, ok func(dir string) bool, progress io.Writer) (node, dir, why string, err error) {
	node, lerr := exec.LookPath("node")
	switch {
	case lerr != nil:
		return "", "", "node is not installed (install Node.js 18+ with npm)", nil
	case src == "":
		return "", "", "run from the Berth source tree (the lock file of " + lockDir + " is there)", nil
	}
	if ok(filepath.Join(src, lockDir)) {
		return node, filepath.Join(src, lockDir), "", nil
	}
	entries, err := os.ReadDir(filepath.Join(src, lockDir))
	if err != nil {
		return "", "", "", err
	}
	files := map[string][]byte{}
	h := sha256.New()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		body, err := os.ReadFile(filepath.Join(src, lockDir, e.Name()))
		if err != nil {
			return "", "", "", err
		}
		files[e.Name()] = body
		h.Write([]byte(e.Name()))
		h.Write(body)
	}
	base, err := peerDir()
	if err != nil {
		return "", "", "", err
	}
	dir = filepath.Join(base, cacheName+"-"+hex.EncodeToString(h.Sum(nil)[:6]))
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil && ok(dir) {
		return node, dir, "", nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "", "npm is not installed (install Node.js with npm)", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", "", err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return "", "", "", err
		}
	}
	fmt.Fprintf(progress, "installing the npm packages of %s with npm ci into %s (first run only)...\n", lockDir, dir)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return "", "", "", fmt.Errorf("npm ci of %s: %w (check the network)", lockDir, err)
	}
	if !ok(dir) {
		return "", "", "", fmt.Errorf("npm ci of %s into %s installed less than the bench needs", lockDir, dir)
	}
	return node, dir, "", os.WriteFile(filepath.Join(dir, "installed"), nil, 0o644)
}

// installed reports whether both servers are in dir's node_modules.
func installed(dir string) bool {
	for _, pkg := range []string{"server-everything", "server-memory"} {
		if _, err := os.Stat(serverScript(dir, pkg)); err != nil {
			return false
		}
	}
	return true
}

// serverScript is the entry point of an installed @modelcontextprotocol server.
func serverScript(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}

// hostedSetup is the broker and project of the hosted figures: the project
// declares server-everything and server-memory, approved.
type hostedSetup struct {
	b               *broker
	root, url       string
	env             []string
	node            string
	everything, mem string // the servers' scripts
	graph           string // server-memory's file
	errLog          *os.File
	brokerRSSBefore float64
}

func (r *runner) hostedServers(ctx context.Context) error {
	node, dir, why, err := installHostedServers(ctx, r.src, r.o.Stderr)
	if err != nil {
		return err
	}
	if why != "" {
		r.skipHosted(why)
		return nil
	}
	h := &hostedSetup{node: node, graph: filepath.Join(r.tmp, "hosted-graph.jsonl"),
		everything: serverScript(dir, "server-everything"), mem: serverScript(dir, "server-memory")}
	if h.errLog, err = os.Create(filepath.Join(r.tmp, "hosted.stderr")); err != nil {
		return err
	}
	defer h.errLog.Close()
	h.b, h.root, h.url, err = h.start(ctx, r.tmp, r.bin, "hosted", h.graph)
	if h.b != nil {
		defer h.b.stop()
	}
	if err != nil {
		return err
	}
	h.env = brokerEnv(h.b.home, h.b.portsStart, 4)
	if h.brokerRSSBefore, err = rssMiB(ctx, h.b.pid()); err != nil {
		return err
	}
	if err := r.hostedHop(ctx, h); err != nil {
		return fmt.Errorf("hosted hop: %w", err)
	}
	if err := r.hostedFirstAnswer(ctx, h); err != nil {
		return fmt.Errorf("hosted first answer: %w", err)
	}
	if err := r.hostedRSS(ctx, h); err != nil {
		return fmt.Errorf("hosted RSS: %w", err)
	}
	if err := r.gateway(ctx, h); err != nil {
		return fmt.Errorf("gateway (mcp-hub): %w", err)
	}
	return nil
}

// profileSeconds is how long a hosted profile runs.
const profileSeconds = 10

// traceSeconds is how long a hosted execution trace runs.
const traceSeconds = 2

// profileCalls makes the subjects' calls in rounds of hopChunk while b's
// CPU profile runs (profileSeconds), then saves its heap profile, then
// makes the first subject's calls alone while its execution trace runs
// (traceSeconds: each call's goroutine hand-offs and syscalls, one path
// at a time): <name>-cpu.pprof, <name>-heap.pprof and <name>-trace in
// --profile's directory.
func (r *runner) profileCalls(ctx context.Context, b *broker, name string, subjects []*hopSubject) error {
	if err := os.MkdirAll(r.o.Profile, 0o755); err != nil {
		return err
	}
	r.progress("%s: the broker's CPU profile over %d s of the same calls", name, profileSeconds)
	if err := callDuring(ctx, b, fmt.Sprintf("profile?seconds=%d", profileSeconds), filepath.Join(r.o.Profile, name+"-cpu.pprof"), subjects); err != nil {
		return err
	}
	if err := b.profile(ctx, "heap", filepath.Join(r.o.Profile, name+"-heap.pprof")); err != nil {
		return fmt.Errorf("profile the broker: %w", err)
	}
	return callDuring(ctx, b, fmt.Sprintf("trace?seconds=%d", traceSeconds), filepath.Join(r.o.Profile, name+"-trace"), subjects[:1])
}

// callDuring makes the subjects' calls in rounds of hopChunk until b's
// profile (a pprof path with its seconds) is saved to path.
func callDuring(ctx context.Context, b *broker, profile, path string, subjects []*hopSubject) error {
	done := make(chan error, 1)
	go func() { done <- b.profile(ctx, profile, path) }()
	for id := 1_000_000; ; id += hopChunk {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("profile the broker: %w", err)
			}
			return nil
		default:
		}
		for _, s := range subjects {
			for i := range hopChunk {
				if err := s.call(id + i); err != nil {
					return fmt.Errorf("%s call: %w", s.name, err)
				}
			}
		}
	}
}

// start runs a broker of bin (its home and project named after name in
// tmp) and attaches a project that declares server-everything and
// server-memory (keeping its graph in graph), approved. It returns the
// broker (to stop, also after an error), the project's root and its HTTP
// endpoint.
func (h *hostedSetup) start(ctx context.Context, tmp string, bin binaries, name, graph string) (b *broker, root, url string, err error) {
	if b, err = startBroker(ctx, bin, filepath.Join(tmp, name+"-home"), 4); err != nil {
		return nil, "", "", err
	}
	if root, err = makeProject(tmp, name+"-project", 5, 3); err != nil {
		return b, "", "", err
	}
	cfg := fmt.Sprintf("servers:\n  everything:\n    command: %q\n    args: [%q, stdio]\n  memory:\n    command: %q\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n",
		h.node, h.everything, h.node, h.mem, graph)
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		return b, "", "", err
	}
	if _, err := b.client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		return b, "", "", fmt.Errorf("approve the hosted servers: %w", err)
	}
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return b, "", "", err
	}
	return b, root, resp.URL, nil
}

// hostedHop: server-everything's echo made on a direct stdio connection to
// the server, through the project's HTTP port and through berth-shim,
// interleaved in rounds of 25; the hop is each path's p50 minus direct's.
// Berth's own current_date on the same HTTP session, in the same rounds,
// shows what the HTTP transport alone costs, and the floor (a minimal
// net/http JSON-RPC handler in a process of its own, the same client)
// what any HTTP server costs.
func (r *runner) hostedHop(ctx context.Context, h *hostedSetup) error {
	r.progress("hosted hop: %d calls of echo each, direct stdio / project port / berth-shim", r.o.HopCalls)
	const args = `{"message":"ping"}`
	direct, err := startChild([]string{h.node, h.everything, "stdio"}, os.Environ(), h.errLog)
	if err != nil {
		return err
	}
	defer direct.stop()
	shim, err := startChild([]string{r.bin.shim, "--project", h.root}, h.env, h.errLog)
	if err != nil {
		return err
	}
	defer shim.stop()
	for _, c := range []*child{direct, shim} {
		if err := c.client.handshake(); err != nil {
			return err
		}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	port, err := openHTTPSession(ctx, hc, h.url)
	if err != nil {
		return err
	}
	defer port.close(context.WithoutCancel(ctx))
	floorProc, floorURL, err := startFloor(h.errLog)
	if err != nil {
		return err
	}
	defer floorProc.stop()
	floor, err := openHTTPSession(ctx, hc, floorURL)
	if err != nil {
		return err
	}
	subjects := []*hopSubject{
		{name: subjectDirect, call: func(id int) error { return direct.client.call(toolCallWith(id, "echo", args), id) }},
		{name: subjectHTTP, call: func(int) error { return port.callWith(ctx, "everything__echo", args) }},
		{name: subjectShim, call: func(id int) error { return shim.client.call(toolCallWith(id, "everything__echo", args), id) }},
		{name: subjectOwn, call: func(int) error { return port.callTool(ctx, hopTool) }},
		{name: subjectFloor, call: func(int) error { return floor.callTool(ctx, hopTool) }},
	}
	if r.o.Baseline != "" {
		bin := binaries{berth: filepath.Join(r.o.Baseline, "berth"), shim: filepath.Join(r.o.Baseline, "berth-shim")}
		b, baseRoot, url, err := h.start(ctx, r.tmp, bin, "baseline", filepath.Join(r.tmp, "baseline-graph.jsonl"))
		if b != nil {
			defer b.stop()
		}
		if err != nil {
			return fmt.Errorf("the --baseline broker: %w", err)
		}
		base, err := openHTTPSession(ctx, hc, url)
		if err != nil {
			return err
		}
		defer base.close(context.WithoutCancel(ctx))
		baseShim, err := startChild([]string{bin.shim, "--project", baseRoot}, brokerEnv(b.home, b.portsStart, 4), h.errLog)
		if err != nil {
			return err
		}
		defer baseShim.stop()
		if err := baseShim.client.handshake(); err != nil {
			return err
		}
		subjects = append(subjects,
			&hopSubject{name: subjectBaseline, call: func(int) error { return base.callWith(ctx, "everything__echo", args) }},
			&hopSubject{name: subjectBaselineOwn, call: func(int) error { return base.callTool(ctx, hopTool) }},
			&hopSubject{name: subjectBaselineShim, call: func(id int) error {
				return baseShim.client.call(toolCallWith(id, "everything__echo", args), id)
			}})
	}
	if err := interleave(subjects, r.o.HopCalls, 2); err != nil { // two untimed rounds warm every path
		return err
	}
	if r.o.Profile != "" {
		// Untimed: the port's calls again while the broker's CPU profile runs.
		if err := r.profileCalls(ctx, h.b, "hosted", []*hopSubject{subjects[1], subjects[3]}); err != nil {
			return err
		}
	}
	if r.o.Baseline != "" {
		for _, pair := range [][2]*hopSubject{{subjects[1], subjects[5]}, {subjects[3], subjects[6]}} {
			r.rs.add(hostedBench, pair[0].name, "vs-baseline-p50", percentile(pair[0].lat, 50).Seconds()/percentile(pair[1].lat, 50).Seconds(), "x", len(pair[0].lat))
		}
	}
	r.rs.add(hostedBench, subjectOwn, "vs-floor-p50", percentile(subjects[3].lat, 50).Seconds()/percentile(subjects[4].lat, 50).Seconds(), "x", len(subjects[3].lat))
	base := percentile(subjects[0].lat, 50)
	for _, s := range subjects {
		p50 := percentile(s.lat, 50)
		r.rs.add(hostedBench, s.name, "call-p50", ms(p50), "ms", len(s.lat))
		if s.name == subjectHTTP || s.name == subjectShim || s.name == subjectBaseline {
			r.rs.add(hostedBench, s.name, "added-p50", ms(p50-base), "ms", len(s.lat))
		}
	}
	// What the forwarding itself adds: the hosted call on the port, minus
	// the port's own cost (Berth's own tool) and the server's (direct).
	http, own := percentile(subjects[1].lat, 50), percentile(subjects[3].lat, 50)
	r.rs.add(hostedBench, subjectHTTP, "forward-p50", ms(http-own-base), "ms", len(subjects[1].lat))
	return nil
}

// hostedFirstAnswer: a new window's first answer (start, initialize,
// initialized, tools/list, memory__read_graph) with server-memory already
// running in the broker, through berth-shim and as a new HTTP session of a
// sub-agent, against starting server-memory for the window as IDEs do
// (the same exchange with read_graph), launched in turn.
func (r *runner) hostedFirstAnswer(ctx context.Context, h *hostedSetup) error {
	r.progress("hosted first answer: %d windows each, server running in Berth / started per window", r.o.Windows)
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	warm, err := openHTTPSession(ctx, hc, h.url)
	if err != nil {
		return err
	}
	if err := warm.callTool(ctx, "memory__read_graph"); err != nil { // the server runs from here on
		return err
	}
	warm.close(ctx)
	window := func(argv, env []string, tool string) (time.Duration, error) {
		start := time.Now()
		c, err := h.window(argv, env, tool)
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		c.stop()
		return d, nil
	}
	agent := func() (time.Duration, error) {
		start := time.Now()
		s, err := openHTTPSession(ctx, hc, h.url)
		if err != nil {
			return 0, err
		}
		defer s.close(context.WithoutCancel(ctx))
		s.nextID++
		if _, err := s.post(ctx, toolsListRequest(s.nextID), true); err != nil {
			return 0, err
		}
		if err := s.callTool(ctx, "memory__read_graph"); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	ds := map[string][]time.Duration{}
	memEnv := append(os.Environ(), "MEMORY_FILE_PATH="+h.graph)
	for range r.o.Windows {
		for _, s := range []struct {
			name string
			run  func() (time.Duration, error)
		}{
			{subjectShim, func() (time.Duration, error) {
				return window([]string{r.bin.shim, "--project", h.root}, h.env, "memory__read_graph")
			}},
			{subjectHTTP, agent},
			{subjectStarted, func() (time.Duration, error) { return window([]string{h.node, h.mem}, memEnv, "read_graph") }},
		} {
			d, err := s.run()
			if err != nil {
				return fmt.Errorf("%s: %w (stderr in %s)", s.name, err, h.errLog.Name())
			}
			ds[s.name] = append(ds[s.name], d)
		}
	}
	for name, list := range ds {
		r.rs.add(hostedBench, name, "first-answer-p50", ms(percentile(list, 50)), "ms", len(list))
	}
	return nil
}

// hostedRSS: 4 windows (berth-shim) and 2 sub-agents (HTTP sessions) each
// call memory__read_graph; Berth's part is the one hosted server-memory and
// what the broker grew by since before it started (the shims, which each
// window runs for Berth's own tools anyway, are counted in rss-with-shims).
// Against: six server-memory processes, one per window and agent.
func (r *runner) hostedRSS(ctx context.Context, h *hostedSetup) error {
	r.progress("hosted RSS: 4 windows + 2 sub-agents on one server-memory, then one copy each")
	shimsRSS, stopShims, err := h.windowsRSS(ctx, 4, []string{r.bin.shim, "--project", h.root}, h.env, "memory__read_graph")
	defer stopShims()
	if err != nil {
		return err
	}
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	for range 2 {
		s, err := openHTTPSession(ctx, hc, h.url)
		if err != nil {
			return err
		}
		defer s.close(context.WithoutCancel(ctx))
		if err := s.callTool(ctx, "memory__read_graph"); err != nil {
			return err
		}
	}
	list, err := h.b.client.Servers(ctx, h.root)
	if err != nil {
		return err
	}
	var server float64
	for _, p := range list.Projects {
		for _, s := range p.Servers {
			if s.Name == "memory" {
				server = float64(s.RSSBytes) / (1 << 20)
			}
		}
	}
	if server == 0 {
		return fmt.Errorf("the hosted server-memory reports no RSS: %+v", list)
	}
	after, err := rssMiB(ctx, h.b.pid())
	if err != nil {
		return err
	}
	berth := server + max(0, after-h.brokerRSSBefore)
	copies, stopCopies, err := h.windowsRSS(ctx, 6, []string{h.node, h.mem}, append(os.Environ(), "MEMORY_FILE_PATH="+h.graph), "read_graph")
	defer stopCopies()
	if err != nil {
		return err
	}
	r.rs.add(hostedBench, subjectHTTP, "rss", berth, "MiB", 6)
	r.rs.add(hostedBench, subjectShim, "rss-with-shims", berth+shimsRSS, "MiB", 6)
	r.rs.add(hostedBench, subjectCopies, "rss", copies, "MiB", 6)
	return nil
}

// window starts argv as an IDE window starts its MCP server (or
// berth-shim), runs its first exchange (initialize, initialized,
// tools/list) and calls tool; the caller stops it.
func (h *hostedSetup) window(argv, env []string, tool string) (*child, error) {
	c, err := startChild(argv, env, h.errLog)
	if err != nil {
		return nil, err
	}
	if err := c.client.handshake(); err == nil {
		err = c.client.call(toolCallRequest(3, tool), 3)
	}
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("%s: %w (stderr in %s)", argv[0], err, h.errLog.Name())
	}
	return c, nil
}

// windowsRSS opens n windows of argv and sums their RSS, in MiB; they run
// until stop is called (also after an error).
func (h *hostedSetup) windowsRSS(ctx context.Context, n int, argv, env []string, tool string) (sum float64, stop func(), err error) {
	var open []*child
	stop = func() {
		for _, c := range open {
			c.stop()
		}
	}
	for range n {
		c, err := h.window(argv, env, tool)
		if err != nil {
			return 0, stop, err
		}
		open = append(open, c)
		rss, err := rssMiB(ctx, c.cmd.Process.Pid)
		if err != nil {
			return 0, stop, err
		}
		sum += rss
	}
	return sum, stop, nil
}

// hostedRows are the table's lines of the hosted figures.
func hostedRows() []row {
	get := func(rs *results, subject, metric string) (float64, bool) {
		r, ok := rs.get(hostedBench, subject, metric)
		return r.Value, ok
	}
	ratio := func(subject, metric, peer, peerMetric string, ok func(float64) bool) func(rs *results) (bool, bool) {
		return func(rs *results) (bool, bool) {
			b, ok1 := get(rs, subject, metric)
			p, ok2 := get(rs, peer, peerMetric)
			if !ok1 || !ok2 || b == 0 {
				return false, false
			}
			return ok(p / b), true
		}
	}
	return []row{
		{label: "hosted server: small tool call p50 through the project's HTTP port", bench: hostedBench, metric: "call-p50", peer: subjectDirect, node: true},
		{label: "hosted server: the same call through berth-shim", bench: hostedBench, metric: "call-p50", berthSubject: subjectShim, node: true},
		{label: "Berth's own small tool (current_date) p50 on the same HTTP session: the transport alone", bench: hostedBench, metric: "call-p50", berthSubject: subjectOwn, node: true},
		{label: "a minimal net/http JSON-RPC handler's call p50 (a process of its own), same client, same rounds", bench: hostedBench, metric: "call-p50", berthSubject: subjectFloor, node: true},
		{label: "Berth's own small tool / the minimal handler's, p50", bench: hostedBench, metric: "vs-floor-p50", berthSubject: subjectOwn, node: true,
			target: "<= 3x", met: func(rs *results) (bool, bool) { v, ok := get(rs, subjectOwn, "vs-floor-p50"); return ok && v <= 3, ok }},
		{label: "hosted hop p50 (project port minus a direct stdio connection)", bench: hostedBench, metric: "added-p50", node: true,
			target: "<= 0.25 ms", met: func(rs *results) (bool, bool) { v, ok := get(rs, subjectHTTP, "added-p50"); return ok && v <= 0.25, ok }},
		{label: "hosted hop p50 through berth-shim (minus direct stdio)", bench: hostedBench, metric: "added-p50", berthSubject: subjectShim, node: true},
		{label: "of the hop, the forwarding alone (port call minus Berth's own tool on the port minus direct stdio)", bench: hostedBench, metric: "forward-p50", node: true},
		{label: "hosted server: a window's first answer p50, server running (berth-shim)", bench: hostedBench, metric: "first-answer-p50",
			berthSubject: subjectShim, peer: subjectStarted, node: true,
			target: ">= 10x faster than started per window", met: ratio(subjectShim, "first-answer-p50", subjectStarted, "first-answer-p50", func(x float64) bool { return x >= 10 })},
		{label: "hosted server: a sub-agent's first answer p50, server running (HTTP)", bench: hostedBench, metric: "first-answer-p50", peer: subjectStarted, node: true},
		{label: "hosted server: RSS for 4 windows + 2 sub-agents (one server-memory + broker growth)", bench: hostedBench, metric: "rss",
			peer: subjectCopies, node: true,
			target: "<= 1/4 of one copy each", met: func(rs *results) (bool, bool) {
				b, ok1 := get(rs, subjectHTTP, "rss")
				p, ok2 := get(rs, subjectCopies, "rss")
				return ok1 && ok2 && b <= p/4, ok1 && ok2 && p > 0
			}},
		{label: "hosted server: the same RSS with the 4 windows' shims counted", bench: hostedBench, metric: "rss-with-shims", berthSubject: subjectShim, node: true},
		{label: "TypeScript SDK client (SSE), server-memory read_graph p50 through Berth's project port", bench: hostedBench, metric: "sdk-call-p50",
			berthSubject: subjectSDKBerth, peer: subjectHub, node: true,
			target: "faster than mcp-hub", met: ratio(subjectSDKBerth, "sdk-call-p50", subjectHub, "sdk-call-p50", func(x float64) bool { return x > 1 })},
		{label: "the same client, the same call on a direct stdio connection to server-memory", bench: hostedBench, metric: "sdk-call-p50", berthSubject: subjectSDKDirect, node: true},
		{label: "mcp-hub's read_graph p50 / Berth's, same client, same rounds", bench: hostedBench, metric: "vs-berth-p50", berthSubject: subjectHub, node: true},
		{label: "the gateway's own RSS beside one running server (Berth: the broker of the hosted project, two servers running)", bench: hostedBench, metric: "gateway-rss",
			berthSubject: subjectSDKBerth, peer: subjectHub, node: true,
			target: "below mcp-hub", met: ratio(subjectSDKBerth, "gateway-rss", subjectHub, "gateway-rss", func(x float64) bool { return x > 1 })},
		{label: "mcp-hub's RSS / Berth's", bench: hostedBench, metric: "vs-berth-rss", berthSubject: subjectHub, node: true},
		{label: "--baseline: the hosted call p50 through its broker's HTTP port, in the same rounds", bench: hostedBench, metric: "call-p50", berthSubject: subjectBaseline, node: true, optional: true},
		{label: "--baseline: its hosted hop p50 (minus direct stdio)", bench: hostedBench, metric: "added-p50", berthSubject: subjectBaseline, node: true, optional: true},
		{label: "--baseline: its own current_date p50", bench: hostedBench, metric: "call-p50", berthSubject: subjectBaselineOwn, node: true, optional: true},
		{label: "hosted call p50, this build / --baseline", bench: hostedBench, metric: "vs-baseline-p50", node: true, optional: true},
		{label: "own current_date p50, this build / --baseline", bench: hostedBench, metric: "vs-baseline-p50", berthSubject: subjectOwn, node: true, optional: true},
	}
}
