package shim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
)

// Autostart says how to start a broker when none answers.
type Autostart struct {
	Disabled    bool
	Binary      string        // berth executable; "" = next to this executable, else on PATH
	IdleTimeout time.Duration // passed as --idle-timeout when > 0 (else the broker's idle_timeout)
	Wait        time.Duration // how long to wait for readiness; 0 = 20s
	Args        []string      // extra arguments to `berth serve`
}

// ReadyFDEnv names the variable that tells `berth serve` which inherited
// file descriptor to report readiness on.
const ReadyFDEnv = "BERTH_READY_FD"

// Connect returns a client for the broker of home, starting one if nothing
// answers on its socket. When several programs start a broker at once, one
// wins the home's lock; the others keep dialing (bounded backoff, at most
// LoserWait) and start again only if the lock holder dies without answering.
func Connect(ctx context.Context, home string, as Autostart) (*api.Client, error) {
	c := api.NewUnixClient(api.SocketPath(home))
	if ping(ctx, c) == nil {
		return c, nil
	}
	if as.Disabled {
		return nil, fmt.Errorf("no broker answers on %s: start one with `berth serve`", api.SocketPath(home))
	}
	for try := 1; ; try++ {
		err := start(ctx, home, as)
		var busy *lockBusyError
		if !errors.As(err, &busy) {
			if err != nil {
				return nil, err
			}
			return c, nil
		}
		err = waitForBroker(ctx, c, busy.pid, LoserWait)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errHolderGone) || try >= 3 {
			return nil, fmt.Errorf("%s: %w", busy.msg, err)
		}
	}
}

// LoserWait bounds how long a program that lost the race to start the
// broker keeps dialing the winner.
const LoserWait = 10 * time.Second

// lockBusyError is a started broker's report that another one holds the lock.
type lockBusyError struct {
	msg string
	pid int // the holder's pid from the message, 0 if unknown
}

func (e *lockBusyError) Error() string { return e.msg }

var errHolderGone = errors.New("the broker holding the lock exited without answering")

func ping(ctx context.Context, c *api.Client) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := c.Health(ctx)
	return err
}

// start launches `berth serve` detached and waits for its readiness line on
// an inherited pipe. If another broker is starting at the same time (its
// lock is held), it waits for that one to answer instead.
func start(ctx context.Context, home string, as Autostart) error {
	bin, err := findBerth(as.Binary)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", home, err)
	}
	out, err := os.OpenFile(filepath.Join(home, "berth.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open broker output log: %w", err)
	}
	defer out.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	args := []string{"serve", "--autostarted"}
	if as.IdleTimeout > 0 {
		args = append(args, "--idle-timeout", as.IdleTimeout.String())
	}
	args = append(args, as.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), api.HomeEnv+"="+home, ReadyFDEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, out, out
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start broker %s: %w", bin, err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reap it if it exits while we live

	wait := as.Wait
	if wait <= 0 {
		wait = 20 * time.Second
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var said []string
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				msg := strings.TrimSpace(strings.Join(said, "; "))
				if strings.Contains(msg, "already running") {
					return &lockBusyError{msg: msg, pid: pidIn(msg)}
				}
				if msg == "" {
					msg = "it exited without a word"
					select {
					case err := <-exited:
						msg = fmt.Sprintf("it exited: %v", err)
					case <-time.After(time.Second):
					}
				}
				return fmt.Errorf("broker failed to start: %s (see %s)", msg, filepath.Join(home, api.LogName))
			}
			if strings.HasPrefix(line, "ready") {
				return nil
			}
			said = append(said, strings.TrimPrefix(line, "error: "))
		case <-timer.C:
			return fmt.Errorf("broker did not get ready within %s (see %s)", wait, filepath.Join(home, api.LogName))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitForBroker dials the socket of a broker another process is starting,
// with a delay growing from 20 ms to 200 ms, for at most wait. It returns
// errHolderGone as soon as the lock holder (pid, when known) has exited.
func waitForBroker(ctx context.Context, c *api.Client, pid int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	delay := 20 * time.Millisecond
	for time.Now().Before(deadline) {
		if ping(ctx, c) == nil {
			return nil
		}
		if pid > 0 && !pidAlive(pid) {
			return errHolderGone
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
	return fmt.Errorf("it did not answer within %s (see `berth doctor`)", wait)
}

// pidIn finds "(pid N)" in a broker's message.
func pidIn(msg string) int {
	_, rest, ok := strings.Cut(msg, "(pid ")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, ")", 2)[0]))
	return n
}

func findBerth(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if exe, err := os.Executable(); err == nil {
		if filepath.Base(exe) == "berth" { // `berth shim`, `berth attach`: start ourselves
			return exe, nil
		}
		if cand := filepath.Join(filepath.Dir(exe), "berth"); isFile(cand) {
			return cand, nil
		}
	}
	p, err := exec.LookPath("berth")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("cannot start the broker: no `berth` next to berth-shim or on PATH (install both binaries, or run `berth serve` yourself)")
		}
		return "", err
	}
	return p, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
