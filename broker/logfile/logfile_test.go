package logfile

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// flaky is a file that refuses writes while full is set.
type flaky struct {
	bytes.Buffer
	full bool
}

func (f *flaky) Write(p []byte) (int, error) {
	if f.full {
		return 0, &os.PathError{Op: "write", Path: "berth.log", Err: syscall.ENOSPC}
	}
	return f.Buffer.Write(p)
}

func (f *flaky) Close() error { return nil }

// TestAFileThatRefusesWritesIsSaidOnce: while the file refuses writes,
// Write still succeeds (a tee to stderr carries on) and Problem says, in
// one sentence, since when, why and how many lines were lost, with the
// fix; once the file takes writes, one line says what was lost before the
// next line, and Problem is empty again.
func TestAFileThatRefusesWritesIsSaidOnce(t *testing.T) {
	f := &flaky{}
	w := newWriter("/home/me/.local/state/berth/berth.log", f)
	log := slog.New(slog.NewTextHandler(w, nil))
	log.Info("first")
	if p := w.Problem(); p != "" {
		t.Fatalf("Problem while writes succeed: %q", p)
	}
	f.full = true
	for range 3 {
		if n, err := w.Write([]byte("lost line\n")); n != len("lost line\n") || err != nil {
			t.Fatalf("Write on a full disk: %d %v, want the line taken", n, err)
		}
	}
	p := w.Problem()
	for _, want := range []string{"/home/me/.local/state/berth/berth.log", "cannot be written since", "no space left on device", "3 log lines lost", "free space"} {
		if !strings.Contains(p, want) {
			t.Errorf("Problem lacks %q: %q", want, p)
		}
	}
	f.full = false
	log.Info("after")
	if p := w.Problem(); p != "" {
		t.Fatalf("Problem once writes succeed again: %q", p)
	}
	lines := strings.Split(strings.TrimSpace(f.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "msg=first") || !strings.Contains(lines[1], "log lines were lost") ||
		!strings.Contains(lines[1], "lost=3") || !strings.Contains(lines[1], "no space left on device") || !strings.Contains(lines[2], "msg=after") {
		t.Fatalf("the file holds:\n%s\nwant first, the line about the 3 lost lines, after", f.String())
	}
}

// TestOpenNamesAFileItCannotOpen: a log that cannot be opened is an error
// at once, naming the file.
func TestOpenNamesAFileItCannotOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "berth.log")
	if _, err := Open(path, Options{MaxMiB: 1}); err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of %s: %v", path, err)
	}
}
