//go:build linux

package systest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
	"github.com/berth-dev/berth/broker/peer/peertest"
)

// needTool returns the path of tool, or ends the test: a skip, or a
// failure under CI (BERTH_CI=1), which installs it.
func needTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	ci.Unavailable(t, "%s is not installed (apt-get install %s)", tool, pkg)
	return ""
}

// openFileLimits reads process pid's soft and hard limits on open files.
func openFileLimits(t *testing.T, pid int) (soft, hard string) {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "Max open files")); strings.HasPrefix(l, "Max open files") && len(f) >= 2 {
			return f[0], f[1]
		}
	}
	t.Fatalf("no open files line in /proc/%d/limits:\n%s", pid, raw)
	return "", ""
}

// stallAsOwner sends, as this process, the headers of a POST /projects
// whose body never comes, and returns the answer's status and error code
// (within a generous 30 s).
func stallAsOwner(network, address string) (int, api.Code, error) {
	c, err := net.DialTimeout(network, address, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "POST /projects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%s: test\r\nContent-Length: 100\r\n\r\n{", api.ClientHeader)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var e api.ErrorBody
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Code, nil
}

// TestAnotherAccountCannotExhaustTheBroker runs a broker under a soft
// limit of 256 open files (hard 1024), which it raises to 1024, and
// floods it from a second real account: 1500 connections to the control
// port that send nothing. It keeps at most a quarter of its limit of
// them (the budget of connections not known to be the owner's) and
// closes the rest as they come, so meanwhile the owner's /health answers
// on TCP and on the socket and a project attaches with its state file
// written. The owner's stalled bodies get 408 body_timeout on TCP and on
// the socket; the other account's stalled bodies, on the control port and
// on a project port, get 403 and their connections are closed at once.
func TestAnotherAccountCannotExhaustTheBroker(t *testing.T) {
	// Beside the light tests, never beside another flood: its broker, port
	// and probe process are its own; the second account shares nothing
	// between tests (each probe holds its own connections and files).
	t.Parallel()
	heavy(t)
	acct := peertest.Second(t)
	prlimit := needTool(t, "prlimit", "util-linux")
	probe := acct.Probe(t)
	ctx := testCtx(t, 3*time.Minute)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr}, Wrap: []string{prlimit, "--nofile=256:1024", "--"}})
	if soft, hard := openFileLimits(t, b.PID()); soft != "1024" || hard != "1024" {
		t.Errorf("the broker's open-file limits are %s (soft) and %s (hard): want the soft raised to the hard, 1024", soft, hard)
	}
	const budget = 1024 / 4
	p := b.Attach(t, brokertest.Project(t, "flooded", nil))

	type stalled struct {
		where string
		code  int
		err   api.Code
		fail  error
	}
	owner := make(chan stalled, 2)
	for _, l := range []struct{ network, address string }{{"tcp", addr}, {"unix", api.SocketPath(b.Home)}} {
		go func() {
			code, e, err := stallAsOwner(l.network, l.address)
			owner <- stalled{l.network, code, e, err}
		}()
	}
	type holding struct {
		h   peertest.Held
		err error
	}
	flood := make(chan holding, 1)
	go func() {
		h, err := probe.Hold(addr, 1500, 6*time.Second)
		flood <- holding{h, err}
	}()
	brokertest.Eventually(t, "the flood holds 200 of the broker's files", func() bool {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", b.PID()))
		return len(fds) >= 200
	})
	// Meanwhile the owner is served: every wait below is bounded by the
	// clients' generous timeouts, not measured (see the benchmarks).
	if _, err := api.NewTCPClient(addr).Health(ctx); err != nil {
		t.Fatalf("the owner's /health over TCP during the flood: %v", err)
	}
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("the owner's /health over the socket during the flood: %v", err)
	}
	root := brokertest.Project(t, "during", nil)
	resp, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil || len(resp.Warnings) > 0 {
		t.Fatalf("an attach during the flood: %v, warnings %q", err, resp.Warnings)
	}
	if _, err := api.ReadStateFile(root); err != nil {
		t.Fatalf("the state file of a project attached during the flood: %v", err)
	}
	held := <-flood
	if held.err != nil {
		t.Fatal(held.err)
	}
	if held.h.Opened < 1024 || held.h.OpenAtEnd > budget || held.h.ClosedAtOnce < held.h.Opened-budget {
		t.Errorf("of the other account's %d connections the broker closed %d at once and kept %d to the end: want at most %d kept (%+v)",
			held.h.Opened, held.h.ClosedAtOnce, held.h.OpenAtEnd, budget, held.h)
	}

	for _, target := range []string{addr, fmt.Sprintf("127.0.0.1:%d", p.Port)} {
		s, err := probe.Stall(target, "/projects", 20, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if s.Statuses[http.StatusForbidden] != 20 || s.Closed != 20 || s.SlowestClose > 10 {
			t.Errorf("the other account's stalled bodies to %s: %+v; want 20 answered 403 and closed at once", target, s)
		}
	}
	for range 2 {
		s := <-owner
		if s.fail != nil || s.code != http.StatusRequestTimeout || s.err != api.CodeBodyTimeout {
			t.Errorf("the owner's stalled body over %s: %d %s %v, want 408 %s", s.where, s.code, s.err, s.fail, api.CodeBodyTimeout)
		}
	}
}

// TestStalledLoginBodiesAreAnswered: with the account check off (the
// macOS mode), anyone may post to /dashboard/login; 200 such posts whose
// bodies never come, from a second account, are each answered 408 and
// closed once the body deadline passes, instead of holding the broker's
// connections as long as the sender likes. (200 stays within the budget
// of connections not known to be the owner's even under a hard limit of
// 1024 open files: past it they would be closed at once instead.)
func TestStalledLoginBodiesAreAnswered(t *testing.T) {
	// 200 connections that wait for the body deadline cost the machine
	// little: the test runs beside the others, on its own broker and port.
	t.Parallel()
	acct := peertest.Second(t)
	probe := acct.Probe(t)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr, "--token-only"}})
	s, err := probe.Stall(addr, "/dashboard/login", 200, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.Statuses[http.StatusRequestTimeout] != 200 || s.Closed != 200 {
		t.Fatalf("200 stalled logins: %+v; want each answered 408 and closed", s)
	}
}

// TestRefusedConnectionsDoNotKeepTheBrokerUp: an auto-started broker with
// no project exits after its idle_timeout even while a second account
// holds idle connections to its control port and sends it request after
// request, each refused.
func TestRefusedConnectionsDoNotKeepTheBrokerUp(t *testing.T) {
	t.Parallel() // its own broker, port and probe process
	acct := peertest.Second(t)
	probe := acct.Probe(t)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr, "--autostarted", "--idle-timeout", "2s"}})
	held := make(chan error, 1)
	go func() { _, err := probe.Hold(addr, 20, 30*time.Second); held <- err }() // ends when the broker closes them
	churn, err := probe.Churn(addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !churn.DialRefused || churn.Statuses[http.StatusForbidden] == 0 {
		t.Fatalf("the broker still listened after 30 s of refused requests (%+v)", churn)
	}
	brokertest.Eventually(t, "the broker exits", func() bool { return !brokertest.Alive(b.PID()) })
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(b.Home, api.LogName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "idle timeout") {
		t.Fatalf("the broker did not stop for its idle timeout:\n%s", tail(string(raw), 20))
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// BenchmarkOwnerHealthDuringFlood is what a flood from another account
// costs the owner: two brokers in the same run, one quiet and one whose
// control port a second real account holds 1500 idle connections to (past
// its budget of connections not known to be the owner's, so every new
// connection is looked up as it is accepted). Each iteration sends the
// owner's GET /health on a new TCP connection to each, in alternating
// order; the metrics are each broker's time per request and their ratio.
// The flood lasts the brokers' header timeout (10 s): run it with
// -benchtime 1000x.
func BenchmarkOwnerHealthDuringFlood(b *testing.B) {
	acct := peertest.Second(b)
	probe := acct.Probe(b)
	start := func() (string, *brokertest.Broker) {
		ctl, _ := brokertest.PortRange(b, 1)
		addr := fmt.Sprintf("127.0.0.1:%d", ctl)
		return addr, brokertest.StartBroker(b, brokertest.Options{Args: []string{"--listen", addr}})
	}
	quiet, _ := start()
	flooded, fb := start()
	done := make(chan error, 1)
	go func() { _, err := probe.Hold(flooded, 1500, 10*time.Second); done <- err }()
	brokertest.Eventually(b, "the flood holds 1000 of the broker's files", func() bool {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", fb.PID()))
		return len(fds) >= 1000
	})
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	health := func(addr string) time.Duration {
		t0 := time.Now()
		resp, err := c.Get("http://" + addr + "/health")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("/health: %d", resp.StatusCode)
		}
		return time.Since(t0)
	}
	var tq, tf time.Duration
	n := 0
	for b.Loop() {
		n++
		if n%2 == 0 {
			tq += health(quiet)
			tf += health(flooded)
		} else {
			tf += health(flooded)
			tq += health(quiet)
		}
	}
	b.ReportMetric(float64(tq.Nanoseconds())/float64(n), "quiet-ns/req")
	b.ReportMetric(float64(tf.Nanoseconds())/float64(n), "flooded-ns/req")
	b.ReportMetric(float64(tf)/float64(tq), "flooded/quiet")
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
