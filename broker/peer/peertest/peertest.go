// Package peertest gives tests a second local account to connect from, so
// that "another account on this machine" is tested with a real one: it is
// created with useradd when missing, and commands run as it (its uid and
// gid, no supplementary groups) straight from the test process.
// Creating an account needs root, which CI has; elsewhere the tests that
// need it are skipped with the reason, and under BERTH_CI=1 they fail.
package peertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// Name is the second account's name.
const Name = "berthpeer"

// Account is a local account other than the one running the tests.
type Account struct {
	Name string
	UID  uint32
	GID  uint32 // its primary group
}

// Second returns the second account, creating it first if needed (a system
// account with no home and no login shell). Concurrent test processes may
// race to create it; the loser finds it made.
func Second(tb testing.TB) Account {
	tb.Helper()
	if os.Getuid() != 0 {
		ci.Unavailable(tb, "creating a second account needs root (CI runs the suite as root)")
	}
	if _, err := lookPath("useradd"); err != nil {
		ci.Unavailable(tb, "useradd is not installed (Debian: apt-get install passwd)")
	}
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		if u, err := user.Lookup(Name); err == nil {
			uid, err := strconv.ParseUint(u.Uid, 10, 32)
			if err != nil {
				tb.Fatalf("account %s has uid %q: %v", Name, u.Uid, err)
			}
			gid, err := strconv.ParseUint(u.Gid, 10, 32)
			if err != nil {
				tb.Fatalf("account %s has gid %q: %v", Name, u.Gid, err)
			}
			return Account{Name: Name, UID: uint32(uid), GID: uint32(gid)}
		}
		useradd, _ := lookPath("useradd")
		out, err := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", Name).CombinedOutput()
		if err == nil {
			continue
		}
		last = fmt.Errorf("useradd %s: %v: %s", Name, err, bytes.TrimSpace(out))
		time.Sleep(100 * time.Millisecond) // /etc/passwd is locked by a concurrent useradd
	}
	tb.Fatal(last)
	return Account{}
}

// Command returns a command running name with args as the account: the
// test process (root) starts it with the account's uid and gid and no
// supplementary groups, as runuser would, without runuser's process and
// PAM session. The caller starts or runs it, and must wait for it.
func (a Account) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: []uint32{}}}
	return cmd
}

// Curl runs curl as the account with args (a URL among them) and returns
// the HTTP status and the body. It fails the test if curl is missing,
// cannot run or gets no HTTP answer.
func (a Account) Curl(tb testing.TB, args ...string) (int, string) {
	tb.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		ci.Unavailable(tb, "curl is not installed")
	}
	code, body, err := a.TryCurl(args...)
	if err != nil {
		tb.Fatal(err)
	}
	return code, body
}

// TryCurl is Curl for goroutines other than the test's: it returns what
// went wrong instead of failing the test.
func (a Account) TryCurl(args ...string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := a.Command(ctx, "curl", append([]string{"--silent", "--show-error", "--max-time", "10", "--write-out", "\n%{http_code}"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("curl as %s %v: %v: %s", a.Name, args, err, stderr.String())
	}
	out := stdout.Bytes()
	i := bytes.LastIndexByte(out, '\n')
	code, err := strconv.Atoi(string(out[i+1:]))
	if err != nil || code == 0 {
		return 0, "", fmt.Errorf("curl as %s %v: no HTTP status in %q (%s)", a.Name, args, out, stderr.String())
	}
	return code, string(out[:i]), nil
}

// TryListen runs the probe as the account to bind address (host:port)
// and returns whether it could, with what it said.
func (a Account) TryListen(tb testing.TB, address string) (bool, string) {
	tb.Helper()
	bound, out, err := a.Probe(tb).Bind(address)
	if err != nil {
		tb.Fatal(err)
	}
	return bound, out
}

// Probe is the probe program, built for a test, run as the account. Its
// methods may run on any goroutine: they return errors, and every wait
// they make is bounded.
type Probe struct {
	a   Account
	bin string
}

// Probe builds the probe (once per test) for the account to run.
func (a Account) Probe(tb testing.TB) *Probe {
	tb.Helper()
	return &Probe{a: a, bin: probeBinary(tb)}
}

// Bind binds address and says whether it could, with what the probe said.
func (p *Probe) Bind(address string) (bool, string, error) {
	return p.run("bind", address)
}

// Held is what Hold reports.
type Held struct {
	Opened       int    `json:"opened"`
	ClosedAtOnce int    `json:"closed_at_once"` // by the server, within a second of opening
	OpenAtEnd    int    `json:"open_at_end"`
	DialError    string `json:"dial_error,omitempty"` // the first one
}

// Hold opens up to n connections to address, sending nothing, and keeps
// them for d (whole seconds); it reports what became of them.
func (p *Probe) Hold(address string, n int, d time.Duration) (Held, error) {
	var h Held
	return h, p.runJSON(&h, "hold", address, strconv.Itoa(n), strconv.Itoa(int(d.Seconds())))
}

// Churned is what Churn reports.
type Churned struct {
	Statuses    map[int]int `json:"statuses"`     // status code -> answers; 0 counts failed requests
	DialRefused bool        `json:"dial_refused"` // a connection was refused: nothing listens any more
}

// Churn sends GET / on a new connection every 20 ms, for d or until a
// connection is refused.
func (p *Probe) Churn(address string, d time.Duration) (Churned, error) {
	var c Churned
	return c, p.runJSON(&c, "churn", address, strconv.Itoa(int(d.Seconds())))
}

// Stalled is what Stall reports.
type Stalled struct {
	Statuses     map[int]int `json:"statuses"` // status code -> answers; 0 counts connections with none
	Closed       int         `json:"closed"`   // connections the server closed
	SlowestClose float64     `json:"slowest_close_seconds"`
}

// Stall opens n connections to address, each sending the headers of a
// POST to path and none of its body, and waits at most d for the server
// to answer and close them.
func (p *Probe) Stall(address, path string, n int, d time.Duration) (Stalled, error) {
	var s Stalled
	return s, p.runJSON(&s, "stall", address, path, strconv.Itoa(n), strconv.Itoa(int(d.Seconds())))
}

// runJSON runs the probe and decodes its report into v.
func (p *Probe) runJSON(v any, args ...string) error {
	ok, out, err := p.run(args...)
	if err == nil && (!ok || json.Unmarshal([]byte(out), v) != nil) {
		err = fmt.Errorf("probe %v as %s: %s", args, p.a.Name, out)
	}
	return err
}

// run runs the probe as the account. ok is its exit status 0; 1 is a
// refusal it reports; anything else is an error.
func (p *Probe) run(args ...string) (ok bool, out string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := p.a.Command(ctx, p.bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out = string(bytes.TrimSpace(stdout.Bytes()))
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) { // 1 is a refusal; anything else, a probe that did not run
		return false, out, fmt.Errorf("probe %v as %s: %v: %s%s", args, p.a.Name, err, out, stderr.String())
	}
	return err == nil, out, nil
}

var (
	probesMu sync.Mutex
	probes   = map[testing.TB]string{}
)

// probeBinary builds the probe into a folder every account can read, once
// per test; the folder goes when the test ends.
func probeBinary(tb testing.TB) string {
	tb.Helper()
	probesMu.Lock()
	defer probesMu.Unlock()
	if bin, ok := probes[tb]; ok {
		return bin
	}
	dir, err := os.MkdirTemp("", "berth-peer-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		os.RemoveAll(dir)
		probesMu.Lock()
		delete(probes, tb)
		probesMu.Unlock()
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/berth-dev/berth/broker/peer/peertest/probe").CombinedOutput(); err != nil {
		tb.Fatalf("build the probe: %v\n%s", err, out)
	}
	probes[tb] = bin
	return bin
}

// NeedIPv6 ends the test where the host has no IPv6 loopback (::1): a
// skip, or a failure under CI (BERTH_CI=1), whose machines have one.
func NeedIPv6(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err == nil {
		ln.Close()
		return
	}
	ci.Unavailable(tb, "this host has no IPv6 loopback (::1): enable IPv6 on lo (%v)", err)
}

// lookPath finds tool on PATH or in the sbin folders a non-login root
// shell may lack.
func lookPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		p := dir + "/" + tool
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New(tool + " not found")
}
