package api

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestReadReadyReadsReportsAndOlderLines(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Ready
	}{
		{`{"pid":42}`, Ready{PID: 42}},
		{`{"error":"broker already running (pid 7): stop it","code":"already_running","holder_pid":7}`,
			Ready{Error: "broker already running (pid 7): stop it", Code: CodeAlreadyRunning, HolderPID: 7}},
		{"ready 42", Ready{PID: 42}},
		{"error: listen 127.0.0.1:4241: address in use", Ready{Error: "listen 127.0.0.1:4241: address in use"}},
		{"ready soon", Ready{Error: "ready soon"}},
	} {
		got, err := ReadReady(strings.NewReader(tc.line + "\n"))
		if err != nil || got != tc.want {
			t.Errorf("ReadReady(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
		if got.OK() != (tc.want.PID > 0 && tc.want.Error == "") {
			t.Errorf("%+v.OK() = %v", got, got.OK())
		}
	}
	if _, err := ReadReady(strings.NewReader("")); !errors.Is(err, ErrNoReport) {
		t.Errorf("empty pipe: %v, want ErrNoReport", err)
	}
}

func FuzzReadReady(f *testing.F) {
	for _, s := range []string{`{"pid":1}`, "ready 3", "error: x", `{"pid":-1}`, `{"error":""}`, "\x00", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, err := ReadReady(strings.NewReader(line))
		if err != nil {
			return
		}
		// A report is ready with a pid, or it says why not: never both, never neither.
		if got.OK() == (got.Error != "") {
			t.Fatalf("%q read as %+v", line, got)
		}
		if got.OK() && got.PID <= 0 {
			t.Fatalf("%q: ready without a pid: %+v", line, got)
		}
	})
}

// TestStartReadyPassesThePipe runs a stand-in for `berth serve` (a shell)
// that reports on the descriptor named by the environment.
func TestStartReadyPassesThePipe(t *testing.T) {
	ctx := context.Background()
	cmd := exec.Command("sh", "-c", `test "$`+ReadyFDEnv+`" = 3 && echo '{"pid":'$$'}' >&3`)
	rep, err := StartReady(ctx, cmd, 10*time.Second)
	if err != nil || !rep.OK() || rep.PID != cmd.Process.Pid {
		t.Fatalf("report %+v, %v; want the shell's pid %d", rep, err, cmd.Process.Pid)
	}
	cmd.Wait()

	silent := exec.Command("sh", "-c", "exit 3")
	if _, err := StartReady(ctx, silent, 10*time.Second); !errors.Is(err, ErrNoReport) {
		t.Fatalf("a process that exits without a word: %v, want ErrNoReport", err)
	}
	silent.Wait()

	slow := exec.Command("sleep", "10")
	if _, err := StartReady(ctx, slow, 50*time.Millisecond); !errors.Is(err, ErrNotReady) {
		t.Fatalf("a process that never reports: %v, want ErrNotReady", err)
	}
	slow.Process.Kill()
	slow.Wait()

	if _, err := StartReady(ctx, &exec.Cmd{Path: "/x", ExtraFiles: []*os.File{os.Stdin}}, time.Second); err == nil {
		t.Fatal("a command with extra files of its own was started")
	}
}

func TestProcessAlive(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if ProcessAlive(cmd.Process.Pid) || ProcessAlive(0) || ProcessAlive(-1) {
		t.Fatal("an exited process, 0 or -1 is alive")
	}
}
