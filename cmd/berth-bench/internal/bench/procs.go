package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/shirou/gopsutil/v4/process"
)

// broker is a `berth serve` the bench started, with a pprof listener.
type broker struct {
	home       string
	cmd        *exec.Cmd
	client     *api.Client
	pprofURL   string
	portsStart int
	exited     chan struct{}
}

// freePorts returns the first of n consecutive loopback ports that were all
// free a moment ago (at most 50 attempts).
func freePorts(n int) (int, error) {
	for attempt := range 50 {
		start := 20000 + (os.Getpid()*7919+attempt*4099+int(time.Now().UnixNano()%10007))%30000
		ok := true
		for p := start; p < start+n && ok; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			return start, nil
		}
	}
	return 0, fmt.Errorf("no %d free consecutive loopback ports found", n)
}

// brokerEnv is the environment that confines a broker (started by the bench
// or auto-started by a shim) to home and a port range: no TCP control API.
func brokerEnv(home string, portsStart, ports int) []string {
	return append(os.Environ(), api.HomeEnv+"="+home, "BERTH_LISTEN=",
		"BERTH_PORTS_START="+strconv.Itoa(portsStart), "BERTH_PORTS_END="+strconv.Itoa(portsStart+ports-1),
		"BERTH_MOUNT_GRACE=10m", "BERTH_LOG_LEVEL=warn")
}

// startBroker runs `berth serve` on home with ports for the projects and a
// pprof listener, and waits (up to 30 s) for its readiness line.
func startBroker(ctx context.Context, bin binaries, home string, ports int) (*broker, error) {
	start, err := freePorts(ports + 1)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	pprofAddr := "127.0.0.1:" + strconv.Itoa(start+ports)
	cmd := exec.Command(bin.berth, "serve", "--home", home, "--pprof", pprofAddr)
	cmd.Env = brokerEnv(home, start, ports)
	logf, err := os.Create(filepath.Join(home, "serve.stderr"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	rep, err := api.StartReady(ctx, cmd, 30*time.Second)
	if cmd.Process == nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin.berth, err)
	}
	b := &broker{home: home, cmd: cmd, client: api.NewUnixClient(api.SocketPath(home)),
		pprofURL: "http://" + pprofAddr + "/debug/pprof", portsStart: start, exited: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(b.exited) }()
	switch {
	case err != nil:
		b.stop()
		return nil, fmt.Errorf("broker did not start: %w (log: %s)", err, filepath.Join(home, "serve.stderr"))
	case !rep.OK():
		b.stop()
		return nil, fmt.Errorf("broker did not start: %s (log: %s)", rep.Error, filepath.Join(home, "serve.stderr"))
	}
	return b, nil
}

func (b *broker) pid() int { return b.cmd.Process.Pid }

// stop sends SIGTERM and waits up to 10 s, then SIGKILL; then it stops any
// broker a shim started on the same home meanwhile.
func (b *broker) stop() {
	terminate(b.cmd.Process, b.exited)
	_ = stopAny(context.Background(), b.home)
}

// terminate ends p, a child of the bench whose exited closes when it is
// reaped: SIGTERM, up to 10 s, then SIGKILL.
func terminate(p *os.Process, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = p.Kill()
		<-exited
	}
}

// stopAny stops a broker that still answers on home's socket (one a shim
// started), by the pid it reports.
func stopAny(ctx context.Context, home string) error {
	c := api.NewUnixClient(api.SocketPath(home))
	defer c.HTTP.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	h, err := c.Health(ctx)
	cancel()
	if err != nil {
		return nil // nothing answers
	}
	return killPID(context.WithoutCancel(ctx), h.PID)
}

// goroutines reads the broker's goroutine count from its pprof listener.
func (b *broker) goroutines(ctx context.Context) (int, error) {
	body, err := httpGet(ctx, b.pprofURL+"/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(body[:min(len(body), 200)]), "\n")
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "goroutine profile: total")))
	if err != nil {
		return 0, fmt.Errorf("goroutine profile header %q: %w", first, err)
	}
	return n, nil
}

// profile saves a pprof profile of the broker (name: "profile?seconds=N", "heap").
func (b *broker) profile(ctx context.Context, name, path string) error {
	body, err := httpGet(ctx, b.pprofURL+"/"+name)
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}

func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return body, err
}

// rssMiB is the resident set size of pid.
func rssMiB(ctx context.Context, pid int) (float64, error) {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return 0, err
	}
	mi, err := p.MemoryInfoWithContext(ctx)
	if err != nil {
		return 0, err
	}
	return float64(mi.RSS) / (1 << 20), nil
}

// cpuMs is the CPU time (user and system) pid has used so far.
func cpuMs(ctx context.Context, pid int) (float64, error) {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return 0, err
	}
	t, err := p.TimesWithContext(ctx)
	if err != nil {
		return 0, err
	}
	return (t.User + t.System) * 1000, nil
}

// killPID stops a process the bench did not start directly (a broker a shim
// auto-started): SIGTERM, up to 10 s, then SIGKILL; it waits until it is gone.
func killPID(ctx context.Context, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("bad pid %d", pid)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200 && api.ProcessAlive(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if api.ProcessAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for i := 0; i < 100 && api.ProcessAlive(pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if api.ProcessAlive(pid) {
			return fmt.Errorf("process %d survived SIGKILL", pid)
		}
	}
	return nil
}

// child is a stdio MCP process (berth-shim or mcp-remote) under test.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *stdioClient
	done   chan struct{}
}

// startChild starts argv with env; its stderr goes to errLog.
func startChild(argv []string, env []string, errLog io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = errLog
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, stdin: in, client: newStdioClient(in, out), done: make(chan struct{})}
	go func() { cmd.Wait(); close(c.done) }()
	return c, nil
}

// stop closes stdin (an IDE's goodbye), waits up to 5 s, then kills by pid.
func (c *child) stop() {
	c.stdin.Close()
	select {
	case <-c.done:
		return
	case <-time.After(5 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}
