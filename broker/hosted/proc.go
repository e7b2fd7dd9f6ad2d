//go:build unix

package hosted

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/berth-dev/berth/broker/pollio"
)

// proc is one server process: its own process group, stdin and stdout as
// pipes Berth holds, stderr split into lines. One goroutine waits for it.
type proc struct {
	procs  *tracker
	tag    string // its TagEnv value
	cmd    *exec.Cmd
	stdin  io.WriteCloser // the child's stdin; closing it asks the server to exit
	stdout io.ReadCloser  // the child's stdout; EOF once every writer is gone
	pid    int
	exited chan struct{} // closed once the process has exited and been reaped
	err    error         // how it exited; set before exited is closed
}

// startProc starts the server's command with args in dir, env added to
// the broker's own environment, and stderr lines sent to emit; procs
// records its process group and tags it.
func startProc(procs *tracker, server, command string, args []string, dir string, env map[string]string, emit func(string)) (*proc, error) {
	cmd := exec.Command(command, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	tag := procs.newTag()
	cmd.Env = append(cmd.Env, TagEnv+"="+tag)
	stderr := &lineWriter{emit: emit}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // a grandchild holding stderr open cannot stall Wait
	cmd.SysProcAttr = procAttr()
	// Own pipes (not StdoutPipe): Wait must not close stdout under the
	// reader before it has read the last message.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	procs.start(server, tag, func() int {
		if err = cmd.Start(); err != nil {
			return 0
		}
		return cmd.Process.Pid
	})
	inR.Close() // the child holds its own copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	// The pipes are read and written directly (broker/pollio): a forwarded
	// call crosses each once.
	p := &proc{procs: procs, tag: tag, cmd: cmd, stdin: pollio.File(inW), stdout: pollio.File(outR), pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		stderr.flush()
		close(p.exited)
	}()
	return p, nil
}

// stop ends the process and everything in its group: close stdin (the MCP
// way to ask a stdio server to exit), then SIGTERM, then SIGKILL, each after
// grace. Whatever is left in the group is killed even when the leader
// exited by itself. It returns once the leader is reaped (at most about
// 2*grace + 5s).
func (p *proc) stop(grace time.Duration) {
	p.stdin.Close()
	if !p.wait(grace) {
		p.signal(syscall.SIGTERM)
		if !p.wait(grace) {
			p.signal(syscall.SIGKILL)
			p.wait(5 * time.Second)
		}
	}
	p.reapGroup()
}

// reapGroup kills what is left of the process group after its leader
// exited, and what left the group carrying the process's tag (Linux).
func (p *proc) reapGroup() {
	p.signal(syscall.SIGKILL)
	p.procs.ended(p.pid, p.tag)
	p.stdout.Close()
}

func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the whole process group (pgid = the leader's pid).
func (p *proc) signal(sig syscall.Signal) {
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Signal(sig)
	}
}

// exitText describes how the process ended, for errors and logs.
func (p *proc) exitText() string {
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return "exit status 0"
	case errors.As(p.err, &ee):
		return ee.ProcessState.String() // "exit status 1" or "signal: killed"
	default:
		return fmt.Sprint(p.err)
	}
}
