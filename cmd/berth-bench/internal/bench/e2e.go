package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
)

// hopTool is the small tool call of the forwarding-hop figure.
const hopTool = "current_date"

// launch starts a stdio bridge, times the IDE's start (initialize,
// initialized, tools/list) and stops it by pid.
func launch(argv, env []string, errLog *os.File) (time.Duration, error) {
	start := time.Now()
	c, err := startChild(argv, env, errLog)
	if err != nil {
		return 0, err
	}
	defer c.stop()
	if err := c.client.handshake(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// launcher is one stdio bridge under test.
type launcher struct {
	subject  string
	argv     []string
	env      []string
	errLog   *os.File
	ds       []time.Duration
	failures int
	firstErr string
}

// launchAll launches each bridge in turn, n rounds within budget, so that
// noise from other work on the machine falls on all of them alike. A
// failed launch is counted (with the first error and the end of the
// bridge's stderr) and the run goes on; more failures than successes end it.
func launchAll(ctx context.Context, n int, budget time.Duration, ls []*launcher) error {
	deadline := time.Now().Add(budget)
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		for _, l := range ls {
			if err := ctx.Err(); err != nil {
				return err
			}
			d, err := launch(l.argv, l.env, l.errLog)
			if err == nil {
				l.ds = append(l.ds, d)
				continue
			}
			l.failures++
			if l.firstErr == "" {
				l.firstErr = fmt.Sprintf("launch %d: %v; its stderr ends with:\n%s", i+1, err, tail(l.errLog.Name(), 1500))
			}
			if l.failures > len(l.ds)+2 {
				return fmt.Errorf("%s fails to start: %s", l.subject, l.firstErr)
			}
		}
	}
	return nil
}

// tail is the end of a file, for error messages.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(raw[max(0, len(raw)-n):])
}

// e2eBroker is the warm broker of the attach and hop figures: one project
// pinned so that it stays mounted.
type e2eBroker struct {
	b    *broker
	root string
	url  string
	env  []string
}

func (r *runner) startE2E(ctx context.Context) (*e2eBroker, error) {
	home := filepath.Join(r.tmp, "e2e-home")
	b, err := startBroker(ctx, r.bin, home, 8)
	if err != nil {
		return nil, err
	}
	// The project's default config: the peer (mcp-remote) sends no DELETE
	// on exit, and the broker ends the idle sessions it leaves behind when
	// a launch needs their place.
	root, err := makeProject(r.tmp, "e2e-project", 20, 1)
	if err != nil {
		b.stop()
		return nil, err
	}
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		b.stop()
		return nil, fmt.Errorf("attach %s: %w", root, err)
	}
	return &e2eBroker{b: b, root: root, url: resp.URL, env: brokerEnv(home, b.portsStart, 8)}, nil
}

// warmAttach: broker running, project mounted; bridge start to the answer
// of the first tools/list: berth-shim as built, berth-shim built without
// cgo (when built here) and the peer, launched in turn on the same project.
func (r *runner) warmAttach(ctx context.Context, e *e2eBroker) error {
	var ls []*launcher
	add := func(subject string, argv, env []string) error {
		f, err := os.Create(filepath.Join(r.tmp, "warm-"+subject+".stderr"))
		if err != nil {
			return err
		}
		r.cleanup = append(r.cleanup, func() { f.Close() })
		ls = append(ls, &launcher{subject: subject, argv: argv, env: env, errLog: f})
		return nil
	}
	if err := add("berth", []string{r.bin.shim, "--project", e.root}, e.env); err != nil {
		return err
	}
	if r.bin.staticShim != "" {
		if err := add(staticSubject, []string{r.bin.staticShim, "--project", e.root}, e.env); err != nil {
			return err
		}
	} else {
		r.rs.skip("warm-attach", staticSubject, "built only from the source tree (not with --bin)", "p50", "p99", "failed-launches")
	}
	if r.peer != nil {
		if err := add(peerName, append(slices.Clone(r.peer), e.url), r.peerEnv()); err != nil {
			return err
		}
	} else {
		r.rs.skip("warm-attach", peerName, r.peerSkip, "p50", "p99", "failed-launches")
	}
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.subject
	}
	r.progress("warm attach: %d launches each of %s, in turn", r.o.Launches, strings.Join(names, ", "))
	if err := launchAll(ctx, r.o.Launches, 5*time.Minute, ls); err != nil {
		return err
	}
	for _, l := range ls {
		r.addLatencies("warm-attach", l.subject, l.ds)
		r.rs.add("warm-attach", l.subject, "failed-launches", float64(l.failures), "launches", l.failures+len(l.ds))
		if l.failures > 0 {
			r.progress("warm attach: %d of %d launches of %s failed; the first: %s", l.failures, l.failures+len(l.ds), l.subject, l.firstErr)
		}
	}
	return nil
}

func (r *runner) peerEnv() []string {
	return append(os.Environ(), "MCP_REMOTE_CONFIG_DIR="+filepath.Join(r.tmp, "mcp-remote-config"))
}

// hop: the same small tool call made directly on the project's HTTP port,
// through berth-shim and through the peer, interleaved in rounds so that
// noise from other work on the machine falls on all three alike.
func (r *runner) hop(ctx context.Context, e *e2eBroker) error {
	r.progress("forwarding hop: %d calls of %s each, direct / berth-shim / %s", r.o.HopCalls, hopTool, peerName)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	direct, err := openHTTPSession(ctx, hc, e.url)
	if err != nil {
		return err
	}
	defer direct.close(context.WithoutCancel(ctx))

	subjects := []*hopSubject{{name: "direct-http", call: func(int) error { return direct.callTool(ctx, hopTool) }}}
	errLog, err := os.Create(filepath.Join(r.tmp, "hop.stderr"))
	if err != nil {
		return err
	}
	defer errLog.Close()
	floor, err := startFloors(ctx, hc, errLog)
	if err != nil {
		return err
	}
	defer floor.stop()
	subjects = append(subjects, floor.subject, floor.inProcess)
	// The bridges end with the hop: left running, a shim would start a
	// broker of its own once the warm one stops.
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	bridge := func(name string, argv, env []string) error {
		c, err := startChild(argv, env, errLog)
		if err != nil {
			return err
		}
		children = append(children, c)
		if err := c.client.handshake(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		subjects = append(subjects, &hopSubject{name: name, call: func(id int) error {
			return c.client.call(toolCallRequest(id, hopTool), id)
		}})
		return nil
	}
	if err := bridge("berth", []string{r.bin.shim, "--project", e.root}, e.env); err != nil {
		return err
	}
	if r.peer != nil {
		if err := bridge(peerName, append(slices.Clone(r.peer), e.url), r.peerEnv()); err != nil {
			return err
		}
	}
	if err := interleave(subjects, r.o.HopCalls, 0); err != nil {
		return err
	}
	base := percentile(subjects[0].lat, 50)
	r.rs.add("hop", "direct-http", "vs-floor-p50", base.Seconds()/percentile(floor.subject.lat, 50).Seconds(), "x", len(subjects[0].lat))
	for _, s := range subjects {
		p50 := percentile(s.lat, 50)
		r.rs.add("hop", s.name, "call-p50", ms(p50), "ms", len(s.lat))
		if s.name != "direct-http" && s.name != subjectFloor && s.name != subjectFloorInProcess {
			r.rs.add("hop", s.name, "added-p50", ms(p50-base), "ms", len(s.lat))
		}
	}
	if r.peer == nil {
		r.rs.skip("hop", peerName, r.peerSkip, "call-p50", "added-p50")
	}
	return nil
}

// hopSubject is one path of a forwarding-hop figure.
type hopSubject struct {
	name string
	call func(id int) error // one call with JSON-RPC id
	lat  []time.Duration
}

// hopChunk is how many calls each subject makes in turn.
const hopChunk = 25

// interleave makes n timed calls on each subject, in rounds of hopChunk
// calls per subject in turn (so that noise from other work on the machine
// falls on all alike), after warm untimed rounds; at most 2 minutes. Each
// round takes the subjects in an order of its own (a shuffle with a fixed
// seed): a subject that runs right after another's calls pays for waking
// its process up, or finds it warm, and with the subjects only rotated
// each one always followed the same one (the hosted call on the port
// after the direct stdio calls, the --baseline's after the floor's), which
// made two brokers of one build differ by 5-10% in the same run.
func interleave(subjects []*hopSubject, n, warm int) error {
	deadline := time.Now().Add(2 * time.Minute)
	first := 10 + warm*hopChunk
	order := rand.New(rand.NewPCG(1, 2))
	for id := 10; id < first+n && time.Now().Before(deadline); id += hopChunk {
		for _, k := range order.Perm(len(subjects)) {
			s := subjects[k]
			for i := range hopChunk {
				t := time.Now()
				if err := s.call(id + i); err != nil {
					return fmt.Errorf("%s call: %w", s.name, err)
				}
				if id >= first {
					s.lat = append(s.lat, time.Since(t))
				}
			}
		}
	}
	return nil
}

// coldStart: no broker; a project whose index is on disk and unchanged;
// shim start (which starts the broker) to the tools/list answer.
func (r *runner) coldStart(ctx context.Context) error {
	r.progress("cold start: indexing %d files once", r.o.ColdFiles)
	home := filepath.Join(r.tmp, "cold-home")
	defer stopAny(context.WithoutCancel(ctx), home)
	root, err := makeProject(r.tmp, "cold-project", r.o.ColdFiles, 2)
	if err != nil {
		return err
	}
	b, err := startBroker(ctx, r.bin, home, 4)
	if err != nil {
		return err
	}
	ports := b.portsStart
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()})
	if err == nil {
		err = waitIndexed(ctx, b.client, resp.ID, time.Minute)
	}
	b.stop()
	if err != nil {
		return err
	}
	r.progress("cold start: %d runs", r.o.ColdRuns)
	env := brokerEnv(home, ports, 4)
	errLog, err := os.Create(filepath.Join(r.tmp, "cold-shim.stderr"))
	if err != nil {
		return err
	}
	defer errLog.Close()
	client := api.NewUnixClient(api.SocketPath(home))
	defer client.HTTP.CloseIdleConnections()
	var ds []time.Duration
	for i := range r.o.ColdRuns {
		start := time.Now()
		c, err := startChild([]string{r.bin.shim, "--project", root}, env, errLog)
		if err != nil {
			return err
		}
		err = c.client.handshake()
		d := time.Since(start)
		h, herr := client.Health(ctx)
		c.stop()
		if herr == nil {
			if kerr := killPID(ctx, h.PID); kerr != nil {
				return kerr
			}
		}
		if err != nil {
			return fmt.Errorf("cold start %d: %w (stderr in %s)", i+1, err, errLog.Name())
		}
		if herr != nil {
			return fmt.Errorf("cold start %d: the auto-started broker does not answer: %w", i+1, herr)
		}
		client.HTTP.CloseIdleConnections()
		ds = append(ds, d)
	}
	slices.Sort(ds)
	r.rs.add("cold-start", "berth", "p50", ms(percentile(ds, 50)), "ms", len(ds))
	r.rs.add("cold-start", "berth", "max", ms(ds[len(ds)-1]), "ms", len(ds))
	return nil
}

// waitIndexed polls the project until its search index is ready.
func waitIndexed(ctx context.Context, c *api.Client, id string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		p, err := c.Project(ctx, id)
		if err != nil {
			return err
		}
		if ix, ok := p.Detail["index"].(map[string]any); ok && ix["state"] == "ready" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("the project's index was not ready within " + limit.String())
}

func (r *runner) addLatencies(bench, subject string, ds []time.Duration) {
	r.rs.add(bench, subject, "p50", ms(percentile(ds, 50)), "ms", len(ds))
	r.rs.add(bench, subject, "p99", ms(percentile(ds, 99)), "ms", len(ds))
}

// percentile of ds (nearest rank); 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
