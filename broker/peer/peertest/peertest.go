// Package peertest gives tests a second local account to connect from, so
// that "another account on this machine" is tested with a real one: it is
// created with useradd when missing and commands run as it with runuser.
// Creating an account needs root, which CI has; elsewhere the tests that
// need it are skipped with the reason, and under BERTH_CI=1 they fail.
package peertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"testing"
	"time"
)

// Name is the second account's name.
const Name = "berthpeer"

// Account is a local account other than the one running the tests.
type Account struct {
	Name string
	UID  uint32
}

// Second returns the second account, creating it first if needed (a system
// account with no home and no login shell). Concurrent test processes may
// race to create it; the loser finds it made.
func Second(tb testing.TB) Account {
	tb.Helper()
	if os.Getuid() != 0 {
		unavailable(tb, "creating a second account needs root (CI runs the suite as root)")
	}
	for _, tool := range []string{"useradd", "runuser"} {
		if _, err := lookPath(tool); err != nil {
			unavailable(tb, fmt.Sprintf("%s is not installed (Debian: apt-get install passwd util-linux)", tool))
		}
	}
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		if u, err := user.Lookup(Name); err == nil {
			uid, err := strconv.ParseUint(u.Uid, 10, 32)
			if err != nil {
				tb.Fatalf("account %s has uid %q: %v", Name, u.Uid, err)
			}
			return Account{Name: Name, UID: uint32(uid)}
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

// Command returns a command running name with args as the account. The
// caller starts or runs it, and must wait for it.
func (a Account) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	runuser, err := lookPath("runuser")
	if err != nil {
		runuser = "runuser"
	}
	return exec.CommandContext(ctx, runuser, append([]string{"-u", a.Name, "--", name}, args...)...)
}

// Curl runs curl as the account with args (a URL among them) and returns
// the HTTP status and the body. It fails the test if curl is missing,
// cannot run or gets no HTTP answer.
func (a Account) Curl(tb testing.TB, args ...string) (int, string) {
	tb.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		unavailable(tb, "curl is not installed")
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

// unavailable skips the test with reason, or fails it under CI
// (BERTH_CI=1), where everything the suite needs is installed.
func unavailable(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv("BERTH_CI") != "" {
		tb.Fatalf("BERTH_CI is set: %s", reason)
	}
	tb.Skip(reason)
}
