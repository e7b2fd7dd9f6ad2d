//go:build linux

package systest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/budgettest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The system test of hostile repositories and requests: every entry of
// hostileCases is a repository or a request written to cost the broker
// time or memory. Each is attached or sent to one real broker, which runs
// under an address-space limit (hostileHeadroom past what it maps at
// start) so that a regression fails the test instead of taking the
// machine's memory. For each entry the test checks that
//
//   - the broker answers a clear error or a bounded result (the entry's
//     own checks);
//   - nothing of the project changes but what the entry allows;
//   - the entry costs the broker process at most budgettest.Slack times
//     its budget: CPU from /proc/PID/stat, peak resident memory (VmHWM,
//     reset before the entry) over what it held before;
//   - meanwhile, a second project's initialize never takes a second.
//
// An entry is a hostileCase added with addHostile, in a file of its own
// area (hostile_config_test.go, ...). The real costs, and a second
// project's initialize p99, are reported by `berth-bench hostile`.

// hostileHeadroom is the address space the broker under test may map
// past what it maps at start.
const hostileHeadroom = 1 << 30

// probeLimit is the longest a second project's initialize may take while
// an entry runs (longer for brokers built with the race detector).
var probeLimit = time.Second * time.Duration(raceBuilt())

// raceBuilt is how many times slower the brokers under test run: 10 when
// they are built with the race detector (BERTH_TEST_RACE), else 1.
func raceBuilt() int {
	if os.Getenv("BERTH_TEST_RACE") != "" {
		return 10
	}
	return 1
}

// hostileSlack is budgettest.Slack for the brokers under test.
var hostileSlack = budgettest.Slack / budgettest.RaceSlowdown * raceBuilt()

// hostileCase is one hostile repository or request.
type hostileCase struct {
	name string
	// budget is what the entry may cost: budgettest.Refusal for a config or
	// a file the broker refuses, budgettest.Request for a request.
	budget budgettest.Budget
	// files is the project's repository, paths relative to its root (the
	// .praxis-os folder is made anyway); a func so that large files are
	// made only when the entry runs.
	files func() map[string]string
	// prepare runs before the measure starts (a FIFO to make, a good
	// project to attach first); it may be nil.
	prepare func(t *testing.T, p *hostileProject)
	// run attaches the project or sends the requests, and fails the test
	// unless the broker answered a clear error or a bounded result.
	run func(ctx context.Context, t *testing.T, p *hostileProject)
	// changes reports whether the entry allows the file at rel (a path
	// relative to the root) to change; nil allows nothing. The project's
	// state file and .praxis-os/.gitignore, which the broker writes as it
	// serves any project, are never checked.
	changes func(rel string) bool
}

// hostileCases is every entry; addHostile adds some.
var hostileCases []hostileCase

// addHostile adds entries to hostileCases; each file of entries calls it
// as `var _ = addHostile(...)`, so that files never share one list.
func addHostile(cs ...hostileCase) bool {
	hostileCases = append(hostileCases, cs...)
	return true
}

// hostileProject is the project of one entry, on the broker under test.
type hostileProject struct {
	b    *brokertest.Broker
	Root string
	ID   string
	// Lease is the attach's, once Attach succeeded.
	Lease string
}

// TestHostileInputs runs every entry of hostileCases on one broker.
func TestHostileInputs(t *testing.T) {
	// Serial: it measures what each input costs the broker against a budget (budgettest), which other tests beside it would skew.
	b := brokertest.StartBroker(t, brokertest.Options{Ports: 40})
	limit := brokertest.LimitAddressSpace(t, b.PID(), hostileHeadroom)
	t.Logf("broker pid %d, address space capped at %d MiB", b.PID(), limit>>20)
	probe := newInitProbe(t, b)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			runHostile(t, b, probe, c)
			if !brokertest.Alive(b.PID()) {
				t.Fatalf("the broker died:\n%s", lastBytes(b.Stderr(), 4000))
			}
		})
	}
}

func runHostile(t *testing.T, b *brokertest.Broker, probe *initProbe, c hostileCase) {
	ctx := testCtx(t, 2*time.Minute)
	files := map[string]string{}
	if c.files != nil {
		files = c.files()
	}
	root := brokertest.Project(t, "hostile", files)
	p := &hostileProject{b: b, Root: root, ID: api.ProjectID(root)}
	if c.prepare != nil {
		c.prepare(t, p)
	}
	before := snapshotTree(t, root)
	pid := b.PID()
	if err := brokertest.ResetPeak(pid); err != nil {
		t.Fatal(err)
	}
	u0, err := brokertest.ProcUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	stop := probe.start()
	measured := false
	measure := func() {
		if measured {
			return
		}
		measured = true
		worst := stop()
		u1, err := brokertest.ProcUsage(pid)
		if err != nil {
			t.Errorf("the broker is gone: %v\n%s", err, lastBytes(b.Stderr(), 4000))
			return
		}
		cost := budgettest.Cost{CPU: u1.CPU - u0.CPU, Memory: max(0, u1.Peak-u0.RSS)}
		t.Logf("cost %s (budget %s CPU, %d MiB); a second project's slowest initialize %s", cost, c.budget.CPU, c.budget.Memory>>20, worst.Round(time.Millisecond))
		if err := cost.Over(c.budget, hostileSlack); err != nil {
			t.Error(err)
		}
		if worst > probeLimit {
			t.Errorf("a second project's initialize took %s meanwhile (at most %s)", worst, probeLimit)
		}
	}
	defer measure() // also when the entry's checks fail
	c.run(ctx, t, p)
	measure()
	after := snapshotTree(t, root)
	for rel, sum := range after {
		if before[rel] != sum && (c.changes == nil || !c.changes(rel)) {
			t.Errorf("%s changed", rel)
		}
	}
	for rel := range before {
		if _, ok := after[rel]; !ok && (c.changes == nil || !c.changes(rel)) {
			t.Errorf("%s was removed", rel)
		}
	}
	p.detach(t)
}

// Attach attaches the project as a CLI pin and returns the broker's
// answer or its error.
func (p *hostileProject) Attach(ctx context.Context) (api.AttachResponse, error) {
	resp, err := p.b.Client.Attach(ctx, api.AttachRequest{Root: p.Root, Kind: api.HolderCLI})
	if err == nil {
		p.Lease = resp.Lease
	}
	return resp, err
}

// MustAttach attaches the project and fails the test if it cannot.
func (p *hostileProject) MustAttach(ctx context.Context, t *testing.T) api.AttachResponse {
	t.Helper()
	resp, err := p.Attach(ctx)
	if err != nil {
		t.Fatalf("attach %s: %v", p.Root, err)
	}
	return resp
}

// Detail is GET /projects/{id}'s engine detail.
func (p *hostileProject) Detail(ctx context.Context, t *testing.T) map[string]any {
	t.Helper()
	pr, err := p.b.Client.Project(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return pr.Detail
}

// WaitIndexed waits until the project's search index is ready.
func (p *hostileProject) WaitIndexed(ctx context.Context, t *testing.T) {
	t.Helper()
	var last *api.IndexState
	if !brokertest.Poll(time.Minute, func() bool {
		pr, err := p.b.Client.Project(ctx, p.ID)
		last = pr.Index
		return err == nil && pr.Index != nil && pr.Index.State == "ready"
	}) {
		t.Fatalf("the index is not ready after a minute: %+v", last)
	}
}

// RawSession initializes a streamable HTTP session at protocol version on
// the project's port and returns a client for it, to send what the go-sdk
// client would not (batches).
func (p *hostileProject) RawSession(t *testing.T, port int, version string) *rawSession {
	t.Helper()
	return openRawSession(t, port, version)
}

// openRawSession is RawSession on a port.
func openRawSession(t *testing.T, port int, version string) *rawSession {
	t.Helper()
	s := &rawSession{url: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), version: version, http: &http.Client{Timeout: time.Minute}}
	resp, err := postMCP(s.http, s.url, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %v %+v", err, resp)
	}
	s.sid = resp.Header.Get("Mcp-Session-Id")
	if _, err := s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	return s
}

// rawSession is a streamable HTTP session driven by hand.
type rawSession struct {
	url, sid, version string
	http              *http.Client
}

// Post sends body on the session and reads the whole answer.
func (s *rawSession) Post(body string) (*mcpAnswer, error) {
	return postMCP(s.http, s.url, s.sid, s.version, body)
}

// Session opens a go-sdk client session on the project's port.
func (p *hostileProject) Session(ctx context.Context, t *testing.T, port int) *mcp.ClientSession {
	t.Helper()
	return connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)})
}

// WriteFile writes a file of the project (rel to its root).
func (p *hostileProject) WriteFile(t *testing.T, rel, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.Root, rel), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// detach releases the pin, if the entry attached the project.
func (p *hostileProject) detach(t *testing.T) {
	if p.Lease == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.b.Client.Detach(ctx, p.ID, ""); err != nil && !errors.Is(err, api.CodeNotMounted) {
		t.Errorf("detach %s: %v", p.Root, err)
	}
}

// snapshotTree is a digest of every regular file under root by its path
// (other files by their type), except what the broker writes for any
// project it serves: the state file and its line in .praxis-os/.gitignore.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join(api.ProjectDir, api.StateFileName) || rel == filepath.Join(api.ProjectDir, ".gitignore") {
			return nil
		}
		if !d.Type().IsRegular() {
			out[rel] = d.Type().String()
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%x", sha256.Sum256(raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// initProbe measures a second project's initialize while entries run:
// one new streamable HTTP session every probeEvery, ended at once.
type initProbe struct {
	t    *testing.T
	url  string
	http *http.Client
}

const probeEvery = 50 * time.Millisecond

func newInitProbe(t *testing.T, b *brokertest.Broker) *initProbe {
	root := brokertest.Project(t, "neighbour", nil)
	resp := b.Attach(t, root)
	if resp.Port == 0 {
		t.Fatalf("the second project has no port: %+v", resp)
	}
	p := &initProbe{t: t, url: fmt.Sprintf("http://127.0.0.1:%d/mcp", resp.Port), http: &http.Client{Timeout: 30 * time.Second}}
	if _, err := p.initialize(); err != nil {
		t.Fatalf("a second project's initialize before any entry: %v", err)
	}
	return p
}

// start probes until the returned func is called, which returns the
// slowest initialize (a failed one counts as taking probeLimit and more).
func (p *initProbe) start() (stop func() time.Duration) {
	done := make(chan struct{})
	var mu sync.Mutex
	var worst time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			d, err := p.initialize()
			if err != nil {
				p.t.Errorf("a second project's initialize: %v", err)
				d = 2 * probeLimit
			}
			mu.Lock()
			worst = max(worst, d)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() time.Duration {
		close(done)
		wg.Wait()
		return worst
	}
}

// initialize opens a session on the second project, timing its
// initialize, and ends it.
func (p *initProbe) initialize() (time.Duration, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	start := time.Now()
	resp, err := postMCP(p.http, p.url, "", "", body)
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return took, fmt.Errorf("initialize: %s %s", resp.Status, resp.Body)
	}
	req, _ := http.NewRequest(http.MethodDelete, p.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if dr, err := p.http.Do(req); err == nil {
		dr.Body.Close()
	}
	return took, nil
}

// mcpAnswer is an HTTP answer of a project port, read whole.
type mcpAnswer struct {
	StatusCode int
	Status     string
	Header     http.Header
	Body       []byte
}

// postMCP POSTs body to a project's /mcp with the session id and the
// protocol version ("" for none) and reads the whole answer.
func postMCP(c *http.Client, url, sid, version, body string) (*mcpAnswer, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &mcpAnswer{StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header, Body: raw}, nil
}

// sseMessages are the JSON-RPC messages of an SSE body (or the one
// message of a JSON body).
func sseMessages(body []byte) []json.RawMessage {
	if t := bytes.TrimSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) == nil {
			return batch
		}
		return []json.RawMessage{t}
	}
	var out []json.RawMessage
	for _, line := range bytes.Split(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, json.RawMessage(slices.Clone(data)))
		}
	}
	return out
}

// wantAPIError fails the test unless err is an api.Error with code whose
// message holds every part of want.
func wantAPIError(t *testing.T, err error, code api.Code, want ...string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("got %v, want an error with code %s", err, code)
	}
	for _, w := range want {
		if !strings.Contains(ae.Message, w) {
			t.Fatalf("error %q does not say %q", ae.Message, w)
		}
	}
}

// lastBytes is the last n bytes of s.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
