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
// answers on its socket.
func Connect(ctx context.Context, home string, as Autostart) (*api.Client, error) {
	c := api.NewUnixClient(api.SocketPath(home))
	if ping(ctx, c) == nil {
		return c, nil
	}
	if as.Disabled {
		return nil, fmt.Errorf("no broker answers on %s: start one with `berth serve`", api.SocketPath(home))
	}
	if err := start(ctx, home, as); err != nil {
		return nil, err
	}
	return c, nil
}

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
					return waitForBroker(ctx, home, wait)
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

// waitForBroker polls the socket of a broker another process is starting.
// Bounded by wait; the interval grows from 20 ms to 200 ms.
func waitForBroker(ctx context.Context, home string, wait time.Duration) error {
	c := api.NewUnixClient(api.SocketPath(home))
	deadline := time.Now().Add(wait)
	delay := 20 * time.Millisecond
	for time.Now().Before(deadline) {
		if ping(ctx, c) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
	return fmt.Errorf("another broker is starting in %s but did not answer within %s", home, wait)
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
