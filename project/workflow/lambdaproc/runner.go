package lambdaproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/berth-dev/berth/project/workflow/pylambda"
)

// ChildCommand is the berth subcommand that runs as the child. It is not
// listed in berth's help: only Berth starts it.
const ChildCommand = "gate-lambda-child"

// Limits bound one child, that is one gate check's lambdas.
type Limits struct {
	// Memory is the memory the child may take beyond what it has at start.
	Memory int64
	// CPU is the CPU time the child may use (whole seconds on Linux and macOS).
	CPU time.Duration
	// Timeout is the wall time from start to the last outcome.
	Timeout time.Duration
}

// DefaultLimits are the limits of a gate check's lambdas in the broker.
var DefaultLimits = Limits{Memory: 256 << 20, CPU: time.Second, Timeout: 3 * time.Second}

// Exit codes of the child besides 0, and the Go runtime's own.
const (
	exitBadInput = 2 // also the Go runtime's exit code for a fatal error ("out of memory")
	exitMemory   = 3 // the watchdog saw the memory limit passed
	exitCPU      = 4 // the kernel sent SIGXCPU: the CPU limit is reached
)

// maxInputBytes bounds the batch the child reads.
const maxInputBytes = 64 << 20

// Runner starts children. It is safe for concurrent use; at most slots
// children run at once, the others wait (and give up when their context ends).
type Runner struct {
	command []string
	limits  Limits
	slots   chan struct{}
}

// New returns a runner that starts command (the berth binary and
// ChildCommand, or a test binary and ChildCommand) under limits, at most
// slots at a time.
func New(command []string, limits Limits, slots int) *Runner {
	return &Runner{command: command, limits: limits, slots: make(chan struct{}, max(slots, 1))}
}

// Limits are the runner's limits.
func (r *Runner) Limits() Limits { return r.limits }

// Result is what one child did.
type Result struct {
	// Outcomes has one entry per call of the batch, in order.
	Outcomes []pylambda.Outcome
	// Stopped says why the child was stopped before the last outcome, or "".
	Stopped string
	// CPU and MaxRSS are the child's own use (zero when it did not start).
	CPU    time.Duration
	MaxRSS int64
}

// Run runs batch b in a child. The error is the context's when it ended
// (the outcomes are then not known), or says that the child could not be
// started; a child stopped by a limit is not an error: its outcomes say
// so.
func (r *Runner) Run(ctx context.Context, b pylambda.Batch) (Result, error) {
	if len(b.Calls) == 0 {
		return Result{Outcomes: []pylambda.Outcome{}}, nil
	}
	if len(r.command) == 0 {
		return Result{}, errors.New("no command is configured to run gate lambdas")
	}
	input, err := json.Marshal(b)
	if err != nil {
		return Result{}, fmt.Errorf("encode the lambdas' input: %w", err)
	}
	if len(input) > maxInputBytes {
		return Result{}, fmt.Errorf("the lambdas' input is %d bytes; at most %d are passed", len(input), maxInputBytes)
	}
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	run, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	defer cancel()
	args := append(append([]string{}, r.command[1:]...),
		"--memory", strconv.FormatInt(r.limits.Memory, 10), "--cpu", strconv.Itoa(max(1, int(r.limits.CPU/time.Second))))
	cmd := exec.CommandContext(run, r.command[0], args...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = []string{"GOMAXPROCS=1"}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	setProcAttr(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", r.command[0], err)
	}
	res := Result{Outcomes: make([]pylambda.Outcome, 0, len(b.Calls))}
	lines := bufio.NewReaderSize(out, 64<<10)
	for len(res.Outcomes) < len(b.Calls) {
		line, err := lines.ReadSlice('\n')
		if err != nil {
			break
		}
		var o pylambda.Outcome
		if json.Unmarshal(line, &o) != nil {
			break
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	waitErr := cmd.Wait()
	if st := cmd.ProcessState; st != nil {
		res.CPU = st.UserTime() + st.SystemTime()
		res.MaxRSS = maxRSS(st)
	}
	if len(res.Outcomes) == len(b.Calls) {
		return res, nil
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	res.Stopped = r.why(run.Err(), waitErr, cmd.ProcessState, stderr.String())
	stopped := pylambda.Outcome{Err: "stopped: " + res.Stopped}
	notRun := pylambda.Outcome{Err: "not run: an earlier lambda of this gate was stopped"}
	res.Outcomes = append(res.Outcomes, stopped)
	for len(res.Outcomes) < len(b.Calls) {
		res.Outcomes = append(res.Outcomes, notRun)
	}
	return res, nil
}

// why names the limit that stopped a child.
func (r *Runner) why(deadline, waitErr error, st interface{ ExitCode() int }, stderr string) string {
	mib := r.limits.Memory >> 20
	code := -1
	if st != nil {
		code = st.ExitCode()
	}
	switch {
	case errors.Is(deadline, context.DeadlineExceeded):
		return fmt.Sprintf("it ran longer than %s (gate lambdas must finish within it: check less, or check it in the phase's own work)", r.limits.Timeout)
	case code == exitMemory, code == exitBadInput && bytes.Contains([]byte(stderr), []byte("out of memory")):
		return fmt.Sprintf("it used more than %d MiB of memory (gate lambdas run under a memory limit: do not build large values)", mib)
	case code == exitCPU, signaled(waitErr, syscall.SIGKILL), signaled(waitErr, syscall.SIGXCPU):
		return fmt.Sprintf("it used more than %s of CPU time (gate lambdas run under a CPU limit)", r.limits.CPU)
	}
	return fmt.Sprintf("the process that runs gate lambdas failed (%v): %s", waitErr, firstLine(stderr))
}

// signaled reports whether err is the exit of a process killed by sig.
func signaled(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// tailBuffer keeps the first max bytes written to it.
type tailBuffer struct {
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.buf.String() }
