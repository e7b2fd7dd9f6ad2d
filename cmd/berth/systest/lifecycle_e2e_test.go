package systest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
)

// newVersion and newProtocol are the version and protocol of the
// "upgraded" binaries the tests build.
const (
	newVersion  = "99.0.0"
	newProtocol = "99"
)

// newBinaries are the upgraded berth and berth-shim.
func newBinaries(t *testing.T) string { return brokertest.BinariesProtocol(t, newVersion, newProtocol) }

// exitForced is the documented exit code of `berth serve` stopped by a
// second signal, without a clean shutdown.
const exitForced = 3

func TestNewerShimReplacesAnIdleOlderBroker(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "upgrade", nil)
	newShim := filepath.Join(newBinaries(t), "berth-shim")

	// An IDE window of the old version auto-starts the old broker, then closes.
	var oldPID, newPID int
	killAtEnd(t, &oldPID)
	killAtEnd(t, &newPID)
	tr, _ := shimTransport(t, home, root, "BERTH_IDLE_TIMEOUT=60s")
	s := connectMCP(t, ctx, tr)
	oldPID = getServerInfo(t, ctx, s).Server.PID
	s.Close()

	// A window of the upgraded version: the old broker makes way, a new one serves.
	tr2, cmd2 := shimTransportBin(t, newShim, home, root, "BERTH_IDLE_TIMEOUT=60s")
	stderr := &brokertest.SyncBuffer{}
	cmd2.Stderr = stderr
	s2 := connectMCP(t, ctx, tr2)
	newPID = getServerInfo(t, ctx, s2).Server.PID
	if newPID == oldPID {
		t.Fatalf("the old broker (pid %d) still serves the new shim; shim said:\n%s", oldPID, stderr.String())
	}
	if brokertest.Alive(oldPID) {
		t.Errorf("old broker %d still runs", oldPID)
	}
	h, err := api.NewUnixClient(api.SocketPath(home)).Health(ctx)
	if err != nil || h.Version != newVersion || h.PID != newPID {
		t.Fatalf("health after the upgrade: %+v %v", h, err)
	}
	if !strings.Contains(stderr.String(), "make way") {
		t.Errorf("the shim did not say it replaced the broker:\n%s", stderr.String())
	}
	// `berth version` of the new build shows both versions.
	cmd := exec.Command(filepath.Join(newBinaries(t), "berth"), "version")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home)
	out, err := cmd.CombinedOutput()
	want := regexp.MustCompile(fmt.Sprintf(`^berth %s \(commit [0-9a-f]{12}(-dirty)?|unknown, protocol %s\)\nbroker %s \(protocol %s, pid %d, %s\)\n$`,
		regexp.QuoteMeta(newVersion), newProtocol, regexp.QuoteMeta(newVersion), newProtocol, newPID, regexp.QuoteMeta(home)))
	if err != nil || !want.Match(out) {
		t.Fatalf("berth version: %v\n%q\nwant\n%s", err, out, want)
	}
}

func TestNewerShimLeavesABusyOlderBrokerRunning(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "busyold", nil)
	other := brokertest.Project(t, "busyother", nil)
	newBin := newBinaries(t)

	var oldPID int
	killAtEnd(t, &oldPID)
	tr, _ := shimTransport(t, home, other, "BERTH_IDLE_TIMEOUT=60s")
	s := connectMCP(t, ctx, tr)
	oldPID = getServerInfo(t, ctx, s).Server.PID

	tr2, cmd2 := shimTransportBin(t, filepath.Join(newBin, "berth-shim"), home, root)
	stderr := &brokertest.SyncBuffer{}
	cmd2.Stderr = stderr
	s2 := connectMCP(t, ctx, tr2)
	if pid := getServerInfo(t, ctx, s2).Server.PID; pid != oldPID {
		t.Fatalf("new shim reached broker %d, want the running %d", pid, oldPID)
	}
	if got := getServerInfo(t, ctx, s); got.Project.Root != other {
		t.Fatalf("the first window lost its project: %+v", got)
	}
	if !strings.Contains(stderr.String(), "older than this shim") || !strings.Contains(stderr.String(), "other sessions") {
		t.Errorf("no warning about the older broker:\n%s", stderr.String())
	}
	// `berth version` of the new build names the older broker and the fix.
	cmd := exec.Command(filepath.Join(newBin, "berth"), "version")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "broker "+api.Version) || !strings.Contains(string(out), "berth stop") {
		t.Fatalf("berth version: %v %s", err, out)
	}
}

func TestBerthStopEndsTheBrokerCleanly(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "stopme", nil)
	resp := b.Attach(t, root)
	out, code := berthCmd(t, b.Home, "version")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("broker %s (protocol %d, pid %d", api.Version, api.Protocol(), b.PID())) {
		t.Fatalf("berth version: %d %s", code, out)
	}
	out, code = berthCmd(t, b.Home, "stop")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("broker stopped (pid %d)", b.PID())) {
		t.Fatalf("berth stop: %d %s", code, out)
	}
	if err := b.Stop(t); err != nil { // already gone: its exit status
		t.Fatalf("broker exit after berth stop: %v\n%s", err, b.Stderr())
	}
	if !strings.Contains(b.Stderr(), "berth stop") {
		t.Errorf("the broker did not log why it stopped:\n%s", b.Stderr())
	}
	if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file survives berth stop: %v", err)
	}
	if _, err := os.Stat(api.SocketPath(b.Home)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket survives berth stop: %v", err)
	}
	brokertest.AssertPortFree(t, resp.Port)
	out, code = berthCmd(t, b.Home, "stop")
	if code != 0 || !strings.Contains(out, "no broker is running in "+b.Home) {
		t.Fatalf("berth stop with no broker: %d %s", code, out)
	}
	out, code = berthCmd(t, b.Home, "version")
	if code != 0 || !strings.Contains(out, "broker not running") {
		t.Fatalf("berth version with no broker: %d %s", code, out)
	}
}

func TestShutdownEndpointIsSocketOnly(t *testing.T) {
	t.Parallel()
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", "127.0.0.1:" + strconv.Itoa(ctl)}})
	r, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/shutdown", ctl), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /shutdown over TCP: %d, want 404", r.StatusCode)
	}
	ctx := testCtx(t, 10*time.Second)
	// A shim's conditional request is refused by a broker it did not start.
	_, err = b.Client.Shutdown(ctx, api.ShutdownRequest{IfUnheld: true})
	if !errors.Is(err, api.CodeNotAutostarted) || !strings.Contains(err.Error(), "berth stop") {
		t.Fatalf("conditional shutdown of a hand-run broker: %v", err)
	}
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("broker gone after refused requests: %v", err)
	}
}

func TestSignalsStopCleanlyAndASecondOneForces(t *testing.T) {
	t.Parallel()
	// A client stuck half-way through a request keeps the project's port
	// busy: the clean stop still ends, bounded, with exit 0.
	b := brokertest.StartBroker(t, brokertest.Options{})
	resp := b.Attach(t, brokertest.Project(t, "sigterm", nil))
	stuck := halfRequest(t, resp.Port)
	defer stuck.Close()
	if err := b.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM with a stuck client: %v\n%s", err, b.Stderr())
	}
	brokertest.AssertPortFree(t, resp.Port)

	// The same situation, and a second SIGINT while the stop waits: exit at
	// once. If the first stop ends before the second signal lands (the stuck
	// client was not yet accepted), that try proves nothing: a fresh broker
	// is tried again, at most three times.
	for try := 1; ; try++ {
		b2 := brokertest.StartBroker(t, brokertest.Options{})
		resp2 := b2.Attach(t, brokertest.Project(t, "sigint", nil))
		stuck2 := halfRequest(t, resp2.Port)
		defer stuck2.Close()
		if err := b2.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		brokertest.Eventually(t, "broker logs that it is stopping", func() bool { return strings.Contains(b2.Stderr(), "broker stopping") })
		if err := b2.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			if try < 3 && b2.Stop(t) == nil {
				continue // it had already stopped cleanly
			}
			t.Fatalf("second SIGINT: %v\n%s", err, b2.Stderr())
		}
		err := b2.Stop(t)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitForced {
			t.Fatalf("exit after a second SIGINT: %v, want code %d\n%s", err, exitForced, b2.Stderr())
		}
		if !strings.Contains(b2.Stderr(), "second signal") {
			t.Errorf("no word about the forced exit:\n%s", b2.Stderr())
		}
		return
	}
}

// halfRequest opens a connection to port and sends half of a first
// request: the server holds such a connection (StateNew) for up to 5 s on
// shutdown, if it accepted it before the shutdown began.
func halfRequest(t *testing.T, port int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTenShimsAtOnceStartExactlyOneBroker(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 120*time.Second)
	roots := []string{brokertest.Project(t, "race1", nil), brokertest.Project(t, "race2", nil), brokertest.Project(t, "race3", nil)}
	const n = 10
	var wg sync.WaitGroup
	pids := make([]int, n)
	t.Cleanup(func() {
		for _, pid := range pids {
			brokertest.KillPID(pid)
		}
	})
	start := make(chan struct{})
	for i := range n {
		root := roots[i%len(roots)]
		tr, _ := shimTransport(t, home, root, "BERTH_IDLE_TIMEOUT=60s")
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s := connectMCP(t, ctx, tr)
			info := getServerInfo(t, ctx, s)
			if info.Project.Root != root {
				t.Errorf("shim %d for %s sees %s", i, root, info.Project.Root)
			}
			pids[i] = info.Server.PID
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, pid := range pids {
		if pid != pids[0] {
			t.Fatalf("shim %d reached broker %d, shim 0 reached %d: want one broker", i, pid, pids[0])
		}
	}
	// The losers' brokers exit at once; in the process table one broker remains.
	var brokers []int32
	brokertest.Eventually(t, "exactly one broker process for the home", func() bool {
		brokers = brokertest.BrokerProcesses(t, home)
		return len(brokers) == 1
	})
	if int(brokers[0]) != pids[0] {
		t.Fatalf("broker process %d, shims reached %d", brokers[0], pids[0])
	}
	h, err := api.NewUnixClient(api.SocketPath(home)).Health(ctx)
	if err != nil || h.Projects != len(roots) {
		t.Fatalf("health %+v %v, want %d projects", h, err, len(roots))
	}
}

func TestShimPrintsTheBrokersOwnStartupError(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	root := brokertest.Project(t, "nostart", nil)
	cmd := exec.Command(brokertest.Shim(t), "--project", root)
	brokertest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home, "BERTH_LISTEN=", "BERTH_PORTS_START=6000", "BERTH_PORTS_END=5000")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "berth-shim: the broker cannot start: ports.start (6000) is above ports.end (5000)") {
		t.Fatalf("shim with a broker that cannot start: %v\n%s", err, out)
	}
	// The failed broker reported before exiting; it is gone soon after.
	brokertest.Eventually(t, "no broker left running", func() bool { return len(brokertest.BrokerProcesses(t, home)) == 0 })
}

func TestIdleExitWaitsForShimsAndControlConnections(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "idle300ms", nil)
	var pid int
	killAtEnd(t, &pid)
	tr, _ := shimTransport(t, home, root, "BERTH_IDLE_TIMEOUT=300ms")
	s := connectMCP(t, ctx, tr)
	pid = getServerInfo(t, ctx, s).Server.PID
	// A broker that did not count what holds it would exit the mount grace
	// (300 ms) plus idle_timeout (300 ms) after it was let go; outlast is
	// that twice over, so that a broker still there did not exit.
	const outlast = 2 * (300*time.Millisecond + 300*time.Millisecond)
	time.Sleep(outlast) // with the shim attached: still there
	if !brokertest.Alive(pid) {
		t.Fatal("the broker exited while a shim was attached")
	}
	getServerInfo(t, ctx, s)

	// A control connection alone keeps it too.
	ctl, err := net.Dial("unix", api.SocketPath(home))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	time.Sleep(outlast)
	if !brokertest.Alive(pid) {
		t.Fatal("the broker exited with a control connection open")
	}
	ctl.Close()
	if !brokertest.WaitGone(pid, 15*time.Second) {
		t.Fatal("the broker did not exit once idle")
	}
	if _, err := os.Stat(api.SocketPath(home)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket survives the idle exit: %v", err)
	}
}

func TestHandStartedBrokerIgnoresIdleTimeout(t *testing.T) {
	t.Parallel()
	// idle_timeout applies only to a broker a shim started: one run by hand
	// or by a service manager runs until stopped.
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{"BERTH_IDLE_TIMEOUT=300ms"}})
	time.Sleep(2 * 300 * time.Millisecond) // twice idle_timeout: one that applied it would be gone
	ctx := testCtx(t, 10*time.Second)
	h, err := b.Client.Health(ctx)
	if err != nil || h.IdleTimeout != "" || h.Autostarted {
		t.Fatalf("hand-started broker after twice idle_timeout: %+v %v", h, err)
	}
}
