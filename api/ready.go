package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The readiness protocol: a program that starts `berth serve` (a shim, a
// test, the benchmarks) passes the write end of a pipe as descriptor
// ReadyFD (the first of exec.Cmd.ExtraFiles) with ReadyEnv() in the
// broker's environment, and reads one line from the read end: a Ready
// report, JSON. The pipe closing without a line means the broker died
// before it could say anything.
const (
	// ReadyFDEnv names the variable that tells `berth serve` which
	// inherited descriptor to report readiness on.
	ReadyFDEnv = "BERTH_READY_FD"
	// ReadyFD is the descriptor starters pass.
	ReadyFD = 3
)

// CodeAlreadyRunning is a Ready report's code when another broker holds
// the home's lock: the starter keeps dialing that one instead.
const CodeAlreadyRunning Code = "already_running"

// ReadyEnv is the environment entry that asks `berth serve` for a report on ReadyFD.
func ReadyEnv() string { return ReadyFDEnv + "=" + strconv.Itoa(ReadyFD) }

// Ready is what `berth serve` reports on the readiness pipe: its pid once
// the control API answers, or the error it stopped with.
type Ready struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	Code  Code   `json:"code,omitempty"`
	// HolderPID is, with CodeAlreadyRunning, the broker holding the lock (0 if unknown).
	HolderPID int `json:"holder_pid,omitempty"`
}

// OK reports whether the broker is ready.
func (r Ready) OK() bool { return r.Error == "" && r.PID > 0 }

// ReadyPipe is the end of the readiness pipe `berth serve` writes to.
type ReadyPipe struct{ f *os.File }

// OpenReadyPipe returns the pipe named by $BERTH_READY_FD (and unsets the
// variable, so that nothing the broker starts inherits it), or nil when
// the broker's starter asked for no report.
func OpenReadyPipe() *ReadyPipe {
	fd, err := strconv.Atoi(os.Getenv(ReadyFDEnv))
	if err != nil || fd < 3 {
		return nil
	}
	os.Unsetenv(ReadyFDEnv)
	return &ReadyPipe{f: os.NewFile(uintptr(fd), "ready")}
}

// Report writes r and closes the pipe; later reports are dropped. A nil
// pipe takes no report.
func (p *ReadyPipe) Report(r Ready) {
	if p == nil || p.f == nil {
		return
	}
	raw, _ := json.Marshal(r)
	_, _ = p.f.Write(append(raw, '\n'))
	_ = p.f.Close()
	p.f = nil
}

// ReadReady reads the report from the read end of the readiness pipe. It
// fails when the pipe closes without one. A line of a Berth older than
// this protocol ("ready PID", "error: MESSAGE") is read as its report.
func ReadReady(r io.Reader) (Ready, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return Ready{}, fmt.Errorf("read the broker's readiness: %w", err)
		}
		return Ready{}, ErrNoReport
	}
	line := strings.TrimSpace(sc.Text())
	var rep Ready
	if json.Unmarshal([]byte(line), &rep) == nil && (rep.PID > 0 || rep.Error != "") {
		return rep, nil
	}
	if pid, ok := strings.CutPrefix(line, "ready "); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(pid)); err == nil && n > 0 {
			return Ready{PID: n}, nil
		}
	}
	if msg := strings.TrimSpace(strings.TrimPrefix(line, "error: ")); msg != "" {
		return Ready{Error: msg}, nil
	}
	return Ready{Error: "the broker sent an empty readiness report"}, nil
}

// ErrNoReport is ReadReady's error for a pipe that closed without a line.
var ErrNoReport = errors.New("the broker exited without a word")

// StartReady starts cmd, a `berth serve` not yet started, with the
// readiness pipe as descriptor ReadyFD (cmd.ExtraFiles must be empty) and
// waits, at most wait, for its report. The error is ErrNoReport when the
// broker exited without one, ErrNotReady when wait passed, or why cmd did
// not start.
func StartReady(ctx context.Context, cmd *exec.Cmd, wait time.Duration) (Ready, error) {
	if len(cmd.ExtraFiles) > 0 {
		return Ready{}, errors.New("start berth serve: the readiness pipe must be its first extra file")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Ready{}, err
	}
	defer r.Close()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, ReadyEnv())
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return Ready{}, err
	}
	type report struct {
		r   Ready
		err error
	}
	got := make(chan report, 1)
	go func() {
		rep, err := ReadReady(r)
		got <- report{rep, err}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case rep := <-got:
		return rep.r, rep.err
	case <-timer.C:
		return Ready{}, fmt.Errorf("%w within %s", ErrNotReady, wait)
	case <-ctx.Done():
		return Ready{}, ctx.Err()
	}
}

// ErrNotReady is StartReady's error when the broker did not report in time.
var ErrNotReady = errors.New("the broker did not get ready")
