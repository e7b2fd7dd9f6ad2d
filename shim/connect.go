package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	pid int // the holder's pid, 0 if unknown
}

func (e *lockBusyError) Error() string { return e.msg }

var errHolderGone = errors.New("the broker holding the lock exited without answering")

func ping(ctx context.Context, c *api.Client) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := c.Health(ctx)
	return err
}

// start launches `berth serve` detached and waits for its readiness
// report (api.StartReady). If another broker is starting at the same time
// (it holds the lock), it returns a *lockBusyError naming that one.
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
	args := []string{"serve", "--autostarted"}
	if as.IdleTimeout > 0 {
		args = append(args, "--idle-timeout", as.IdleTimeout.String())
	}
	args = append(args, as.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), api.HomeEnv+"="+home)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, out, out
	cmd.SysProcAttr = detached()
	wait := as.Wait
	if wait <= 0 {
		wait = 20 * time.Second
	}
	rep, err := api.StartReady(ctx, cmd, wait)
	if cmd.Process != nil {
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }() // reap it if it exits while we live
		if errors.Is(err, api.ErrNoReport) {
			select {
			case werr := <-exited:
				err = fmt.Errorf("it exited: %v", werr)
			case <-time.After(time.Second):
			}
		}
	}
	log := filepath.Join(home, api.LogName)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, api.ErrNotReady):
		return fmt.Errorf("%w (see %s)", err, log)
	case err != nil && cmd.Process == nil:
		return fmt.Errorf("start broker %s: %w", bin, err)
	case err != nil:
		return fmt.Errorf("broker failed to start: %v (see %s)", err, log)
	case rep.Code == api.CodeAlreadyRunning:
		return &lockBusyError{msg: rep.Error, pid: rep.HolderPID}
	case rep.Code == api.CodeBadConfig:
		// The message names the file, line or variable: the log has nothing more.
		return &api.Error{Code: api.CodeBadConfig, Message: "the broker cannot start: " + rep.Error}
	case !rep.OK():
		return fmt.Errorf("broker failed to start: %s (see %s)", rep.Error, log)
	}
	return nil
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
		if pid > 0 && !api.ProcessAlive(pid) {
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
