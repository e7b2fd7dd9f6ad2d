package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// brokerLoad is what the broker holds that abandoned sessions could grow.
type brokerLoad struct {
	goroutines, fds, rss, heap float64
}

func (l brokerLoad) String() string {
	return fmt.Sprintf("%.0f goroutines, %.0f fds, %.1f MiB RSS, %.1f MiB heap live", l.goroutines, l.fds, l.rss/(1<<20), l.heap/(1<<20))
}

// loadOf reads the broker's goroutines, open files, RSS and heap from
// /metrics; with pprof (the broker's --pprof address) it first makes the
// broker collect its garbage, so that the heap is what it holds.
func loadOf(t *testing.T, ctx context.Context, b *brokertest.Broker, pprof ...string) brokerLoad {
	t.Helper()
	for _, addr := range pprof {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/debug/pprof/heap?gc=1", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fams := scrape(t, ctx, b)
	var l brokerLoad
	var ok1, ok2, ok3, ok4 bool
	l.goroutines, ok1 = metricValue(fams, "go_goroutines", nil)
	l.fds, ok2 = metricValue(fams, "process_open_fds", nil)
	l.rss, ok3 = metricValue(fams, "process_resident_memory_bytes", nil)
	l.heap, ok4 = metricValue(fams, "go_memstats_heap_alloc_bytes", nil)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatal("/metrics lacks go_goroutines, process_open_fds, process_resident_memory_bytes or go_memstats_heap_alloc_bytes")
	}
	return l
}

// Bounds of what abandoned sessions may leave behind, over the baseline
// (docs/configuration.md, "Sessions"). The baseline is taken once the
// project already holds the idle sessions it keeps, so the steady state
// must not differ from it; the slack covers the broker's own background
// goroutines that come and go (timers, the metrics scrape).
const (
	goroutineSlack = 8
	fdSlack        = 3
)

// heapSlack bounds the heap in use after a collection over the baseline.
const heapSlack = 4 << 20

// settles polls until the broker's goroutines and fds (and, given pprof,
// its heap after a collection) are back within the slack of base, and
// returns the last reading.
func settles(t *testing.T, ctx context.Context, b *brokertest.Broker, base brokerLoad, pprof ...string) brokerLoad {
	t.Helper()
	var now brokerLoad
	if !brokertest.Poll(20*time.Second, func() bool {
		now = loadOf(t, ctx, b, pprof...)
		return now.goroutines <= base.goroutines+goroutineSlack && now.fds <= base.fds+fdSlack &&
			(len(pprof) == 0 || now.heap <= base.heap+heapSlack)
	}) {
		t.Fatalf("the broker did not return to its baseline: %s, baseline %s (slack %d goroutines, %d fds, %d MiB heap)",
			now, base, goroutineSlack, fdSlack, heapSlack>>20)
	}
	return now
}

// abandon runs the TypeScript SDK client runs times in a row in one node
// process (testdata/tsclient/abandon.mjs): initialize, one tool call,
// close, never DELETE.
func abandon(t *testing.T, ctx context.Context, node, url string, runs int) (ok int, failures []string) {
	t.Helper()
	out := runTSScript(t, ctx, node, nil, "abandon.mjs", url, fmt.Sprint(runs))
	var res struct {
		OK       int      `json:"ok"`
		Failures []string `json:"failures"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("abandon.mjs printed %q: %v", out, err)
	}
	return res.OK, res.Failures
}

// TestTypeScriptClientThatNeverDeletesRunsTwoHundredTimes runs the
// TypeScript SDK client 200 times in a row against a project with the
// default config (mcp.max_sessions 10); it never sends DELETE. Every run
// succeeds, and the broker's goroutines and fds end where they were.
func TestTypeScriptClientThatNeverDeletesRunsTwoHundredTimes(t *testing.T) {
	t.Parallel()
	heavy(t)
	node := needTSClient(t)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--log-level", "info"}})
	ctx := testCtx(t, 4*time.Minute)
	p := b.Attach(t, brokertest.Project(t, "abandoned", nil))
	// Warm up: the project fills its ten places with idle sessions, which
	// it keeps; that is the baseline.
	if ok, failures := abandon(t, ctx, node, p.URL, 20); ok != 20 {
		t.Fatalf("warm-up: %d of 20 runs succeeded: %v", ok, failures)
	}
	base := settles(t, ctx, b, loadOf(t, ctx, b))
	ok, failures := abandon(t, ctx, node, p.URL, 200)
	if ok != 200 {
		t.Fatalf("%d of 200 runs succeeded; failures: %v", ok, failures)
	}
	after := settles(t, ctx, b, base)
	t.Logf("after 200 abandoned sessions: %s; baseline %s", after, base)
	if n := len(sessionsOf(t, ctx, b, p.ID)); n > 10 {
		t.Errorf("%d sessions held, more than mcp.max_sessions", n)
	}
}

// TestThousandAbandonedSessionsWithoutALimit opens 1,000 sessions in a row
// on a project with mcp.max_sessions 0 (no limit), each initialized, used
// once and abandoned: the broker keeps at most keepIdle (10) of them once
// they have been idle a few seconds, and its goroutines, fds and heap (after
// a collection) end where they were, whatever session_timeout says (1h
// here). RSS is logged: the Go runtime returns freed pages to the system
// only gradually.
func TestThousandAbandonedSessionsWithoutALimit(t *testing.T) {
	t.Parallel()
	pport, _ := brokertest.PortRange(t, 1)
	pprof := fmt.Sprintf("127.0.0.1:%d", pport)
	// At the default log level: at debug, the log rings (bounded) would fill
	// with a line per request and hide what the sessions leave.
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--session-timeout", "1h", "--pprof", pprof, "--log-level", "info"}})
	ctx := testCtx(t, 3*time.Minute)
	p := b.Attach(t, maxSessionsProject(t, "unlimited", 0))
	open := func(n int) {
		for i := range n {
			sid := rawInitialize(t, ctx, p.URL)
			if status, _ := callServerInfo(t, ctx, p.URL, sid); status != http.StatusOK {
				t.Fatalf("session %d: %d", i, status)
			}
		}
	}
	kept := func() {
		t.Helper()
		if !brokertest.Poll(30*time.Second, func() bool { return len(sessionsOf(t, ctx, b, p.ID)) <= 10 }) {
			t.Fatalf("%d sessions still held 30s after they went idle, want at most 10", len(sessionsOf(t, ctx, b, p.ID)))
		}
	}
	open(20)
	kept()
	http.DefaultClient.CloseIdleConnections()
	base := settles(t, ctx, b, loadOf(t, ctx, b, pprof), pprof)
	open(1000)
	kept()
	http.DefaultClient.CloseIdleConnections()
	after := settles(t, ctx, b, base, pprof)
	t.Logf("after 1000 abandoned sessions (max_sessions 0): %s; baseline %s", after, base)
}
