// Package brokertest starts real Berth processes for tests: it builds the
// binaries once, runs `berth serve` on a temp home with loopback ports, makes
// example projects, and kills every process it started by its pid.
package brokertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
)

var (
	buildMu sync.Mutex
	builds  = map[string]string{} // version, protocol ("" = as the source says) and packages -> directory
	shared  = map[string]bool{}   // the directories of builds other test processes use too
)

// Binaries builds berth and berth-shim once per source tree (test
// processes share the build, sharedBuild) and returns the directory
// holding them. Call Cleanup from TestMain to remove what only this
// process uses.
func Binaries(tb testing.TB) string { return BinariesVersion(tb, "") }

// BinariesVersion returns berth and berth-shim that report version (as
// -ldflags -X on api.Version sets it in a release build; here an
// api.TestBuildFile beside a copy of the one build); "" keeps the
// source's version. Each version is made once per test process. With
// BERTH_TEST_BIN set, the source's version is the berth and berth-shim in
// that directory instead (another build, to compare its behaviour).
func BinariesVersion(tb testing.TB, version string) string {
	return BinariesProtocol(tb, version, "")
}

// BinariesProtocol returns berth and berth-shim that report version and
// speak protocol (api.ProtocolVersion, "" for the source's).
func BinariesProtocol(tb testing.TB, version, protocol string) string {
	tb.Helper()
	if dir := os.Getenv("BERTH_TEST_BIN"); dir != "" && version == "" {
		return dir
	}
	return built(tb, version, protocol, "./cmd/berth", "./cmd/berth-shim")
}

// ShimVersion returns the path of a berth-shim alone reporting version,
// for a test whose shim attaches to a broker already running: no berth
// beside it could start another.
func ShimVersion(tb testing.TB, version string) string {
	tb.Helper()
	return filepath.Join(built(tb, version, "", "./cmd/berth-shim"), "berth-shim")
}

// built returns the directory of pkgs for version and protocol, made once
// per test process. The source's version is linked once (berth and
// berth-shim together, shared by the test processes of the same source
// tree: sharedBuild); every other version is a copy of that build with
// an api.TestBuildFile beside it, which sets what the copies report as
// -ldflags -X would, without linking them again.
func built(tb testing.TB, version, protocol string, pkgs ...string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	key := strings.Join(append([]string{version, protocol}, pkgs...), "\x00")
	if dir, ok := builds[key]; ok {
		return dir
	}
	src, ok := builds[sourceKey]
	if !ok {
		var err error
		var isShared bool
		if src, isShared, err = build(); err != nil {
			tb.Fatal(err)
		}
		builds[sourceKey] = src
		if isShared {
			shared[src] = true
		}
	}
	if version == "" && protocol == "" {
		return src
	}
	dir, err := copyBuild(src, version, protocol, pkgs)
	if err != nil {
		tb.Fatal(err)
	}
	builds[key] = dir
	return dir
}

// sourceKey is the key of the one build from source in builds.
var sourceKey = strings.Join([]string{"", "", "./cmd/berth", "./cmd/berth-shim"}, "\x00")

// build links berth and berth-shim from the source, once for every test
// process of the same source tree (sharedBuild), or into a new directory
// of this process where there is no cache directory to share.
func build() (dir string, shared bool, err error) {
	modRoot, err := moduleRoot()
	if err != nil {
		return "", false, err
	}
	// No VCS stamp: the binaries report the version the test process has
	// (its own build is never stamped), "(devel)" unless one is set.
	// The tag berthtest adds what only tests use (HoldEnv's tool, the
	// api.TestBuildFile); lockorder makes a broker panic on a lock taken
	// out of its order (broker/lockorder).
	args := []string{"-buildvcs=false", "-tags", "berthtest,lockorder"}
	if os.Getenv("BERTH_TEST_RACE") != "" { // build the processes under test with the race detector
		args = append(args, "-race")
	}
	if dir, ok, err := sharedBuild(modRoot, args); ok || err != nil {
		return dir, ok, err
	}
	if dir, err = os.MkdirTemp("", "berth-bin-"); err != nil {
		return "", false, err
	}
	return dir, false, goBuild(modRoot, dir, args)
}

// goBuild links berth and berth-shim from the source tree at modRoot into dir.
func goBuild(modRoot, dir string, args []string) error {
	args = append(append([]string{"build"}, args...), "-o", dir+string(filepath.Separator), "./cmd/berth", "./cmd/berth-shim")
	cmd := exec.Command("go", args...)
	cmd.Dir = modRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// copyBuild copies the binaries of pkgs from src into a new directory
// whose api.TestBuildFile makes them report version and protocol.
func copyBuild(src, version, protocol string, pkgs []string) (string, error) {
	dir, err := os.MkdirTemp("", "berth-bin-")
	if err != nil {
		return "", err
	}
	var file strings.Builder
	if version != "" {
		fmt.Fprintf(&file, "version=%s\n", version)
	}
	if protocol != "" {
		fmt.Fprintf(&file, "protocol=%s\n", protocol)
	}
	if err := os.WriteFile(filepath.Join(dir, api.TestBuildFile), []byte(file.String()), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", api.TestBuildFile, err)
	}
	for _, pkg := range pkgs {
		name := filepath.Base(pkg)
		if err := LinkExecutable(filepath.Join(src, name), filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("copy the build of %s: %w", pkg, err)
		}
	}
	return dir, nil
}

// LinkExecutable makes dst the executable src under another name: a hard
// link, or a copy where dst is on another file system. A copy written
// while other tests start processes can fail to run with "text file busy"
// (a child forked meanwhile holds the written file open until it execs);
// a link opens no file for writing.
func LinkExecutable(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, raw, 0o755)
}

// Cleanup removes the built binaries only this test process uses.
func Cleanup() {
	buildMu.Lock()
	defer buildMu.Unlock()
	for v, dir := range builds {
		if !shared[dir] {
			os.RemoveAll(dir)
		}
		delete(builds, v)
	}
}

// HoldEnv, set in a broker's environment, names a folder: every mount of
// the binaries built here then offers a tool berth_test_hold {"name": N}
// that returns once the file N exists in that folder (broker/mounttable/testhold.go).
const HoldEnv = "BERTH_TEST_HOLD_DIR"

// Berth is the path of the built berth binary.
func Berth(tb testing.TB) string { return filepath.Join(Binaries(tb), "berth") }

// Shim is the path of the built berth-shim binary.
func Shim(tb testing.TB) string { return filepath.Join(Binaries(tb), "berth-shim") }

// Home makes a short temp BERTH_HOME (unix socket paths are limited to ~100 bytes).
func Home(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "bh")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Broker is a running `berth serve`.
type Broker struct {
	Home   string
	Cmd    *exec.Cmd
	Client *api.Client
	Start  int // ports.start
	End    int // ports.end
	exited chan struct{}
	err    error
}

// Options tune StartBroker.
type Options struct {
	Home       string   // default: a new temp home
	Ports      int      // size of the port range (default 20)
	MountGrace string   // default 300ms
	Args       []string // extra flags
	Env        []string
	// Bare passes only --home and Args: the config file and environment decide the rest.
	Bare bool
	// Wrap is a command (with its arguments) that runs the broker in its
	// own place, such as prlimit --nofile=256:1024 --: the pid is the broker's.
	Wrap []string
}

// StartBroker runs `berth serve` and waits for its readiness line. The
// process is stopped (SIGTERM, then SIGKILL) when the test ends.
func StartBroker(tb testing.TB, o Options) *Broker {
	tb.Helper()
	b, err := TryStartBroker(tb, o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TryStartBroker is StartBroker returning the startup error.
func TryStartBroker(tb testing.TB, o Options) (*Broker, error) {
	tb.Helper()
	if o.Home == "" {
		o.Home = Home(tb)
	}
	if o.Ports == 0 {
		o.Ports = 20
	}
	if o.MountGrace == "" {
		o.MountGrace = "300ms"
	}
	start, end := PortRange(tb, o.Ports)
	args := append([]string{"serve", "--home", o.Home, "--listen", "", "--ports-start", strconv.Itoa(start),
		"--ports-end", strconv.Itoa(end), "--mount-grace", o.MountGrace, "--log-level", "debug"}, o.Args...)
	if o.Bare {
		args = append([]string{"serve", "--home", o.Home}, o.Args...)
	}
	cmd := exec.Command(Berth(tb), args...)
	if len(o.Wrap) > 0 {
		cmd = exec.Command(o.Wrap[0], append(append(o.Wrap[1:], Berth(tb)), args...)...)
	}
	cmd.Env = append(append(os.Environ(), api.HomeEnv+"="+o.Home), o.Env...)
	DieWithTest(cmd)
	logf, err := os.Create(filepath.Join(o.Home, "serve.stderr"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	rep, err := api.StartReady(context.Background(), cmd, 20*time.Second)
	if cmd.Process == nil {
		logf.Close()
		return nil, err
	}
	b := &Broker{Home: o.Home, Cmd: cmd, Client: api.NewUnixClient(api.SocketPath(o.Home)), Start: start, End: end, exited: make(chan struct{})}
	go func() { b.err = cmd.Wait(); logf.Close(); close(b.exited) }()
	tb.Cleanup(func() {
		if tb.Failed() {
			b.dumpStacks(tb)
		}
		b.Kill(tb)
		if strings.Contains(b.Stderr(), "WARNING: DATA RACE") {
			tb.Errorf("the broker reported a data race:\n%s", b.Stderr())
		}
	})
	switch {
	case errors.Is(err, api.ErrNotReady):
		return nil, fmt.Errorf("broker not ready after 20s; stderr in %s", filepath.Join(o.Home, "serve.stderr"))
	case err != nil:
		<-b.exited
		return nil, fmt.Errorf("broker did not start: %v", err)
	case !rep.OK():
		<-b.exited
		return nil, fmt.Errorf("broker did not start: %s", rep.Error)
	}
	return b, nil
}

// PID is the broker's process id.
func (b *Broker) PID() int { return b.Cmd.Process.Pid }

// Stop sends SIGTERM and waits (up to 10 s) for the exit; it returns the exit error.
func (b *Broker) Stop(tb testing.TB) error {
	tb.Helper()
	_ = b.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
		return b.err
	case <-time.After(10 * time.Second):
		_ = b.Cmd.Process.Kill()
		<-b.exited
		return fmt.Errorf("broker ignored SIGTERM for 10s")
	}
}

// Kill sends SIGKILL (if still running) and waits for the exit.
func (b *Broker) Kill(tb testing.TB) {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.Cmd.Process.Kill()
	<-b.exited
}

// dumpStacks leaves evidence of a failed test: a broker still running
// gets SIGQUIT, which makes it print every goroutine's stack and exit,
// and the tail of what it printed goes to the test's log.
func (b *Broker) dumpStacks(tb testing.TB) {
	select {
	case <-b.exited:
	default:
		_ = b.Cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-b.exited:
		case <-time.After(3 * time.Second):
		}
	}
	log, stacks, _ := strings.Cut(b.Stderr(), "SIGQUIT: quit")
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	tb.Logf("the broker's last %d log lines (all in %s):\n%s", len(lines), filepath.Join(b.Home, "serve.stderr"), strings.Join(lines, "\n"))
	if stacks != "" {
		tb.Logf("the broker's goroutines at the end of the test:%s", stacks)
	}
}

// logTail is how many of the broker's last log lines a failed test logs.
const logTail = 200

// Stderr is what the broker printed.
func (b *Broker) Stderr() string {
	raw, _ := os.ReadFile(filepath.Join(b.Home, "serve.stderr"))
	return string(raw)
}

// Project makes a temp project directory with a .praxis-os folder and the
// given files (paths relative to the root).
func Project(tb testing.TB, name string, files map[string]string) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		tb.Fatal(err)
	}
	return real
}

// Attach attaches root as a CLI holder through the API.
func (b *Broker) Attach(tb testing.TB, root string) api.AttachResponse {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	resp, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		tb.Fatalf("attach %s: %v", root, err)
	}
	return resp
}
