// Package logfile is the broker's log file, berth.log: rotated by size,
// with compressed backups (lumberjack), behind a writer that knows when
// the file cannot be written. A log that cannot be written cannot say so
// itself: the writer keeps the failure (since when, the error, how many
// lines were lost) for the places the user looks (/health, `berth
// doctor`, the dashboard), and once the file takes writes again it first
// writes one line saying what was lost.
package logfile

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Options tune Open.
type Options struct {
	MaxMiB  int // rotate at this size
	Backups int // compressed backups kept
}

// Writer writes log lines to the file and records why it cannot. Its
// Write never fails (so that a tee to stderr carries on): a line the file
// refused is counted as lost.
type Writer struct {
	path string

	mu      sync.Mutex // guards out and the failure below, and orders writes
	out     io.WriteCloser
	failed  error     // the first error of the current failure; nil while writes succeed
	since   time.Time // when it began
	lost    int       // lines lost since
	lastErr error     // the latest error
}

// Open opens the log at path (0600), rotated as o says. The file is
// opened once here: one that cannot be opened at all is a startup error
// naming it, not a failure noticed later.
func Open(path string, o Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	f.Close()
	return newWriter(path, &lumberjack.Logger{Filename: path, MaxSize: o.MaxMiB, MaxBackups: o.Backups, Compress: true}), nil
}

func newWriter(path string, out io.WriteCloser) *Writer {
	return &Writer{path: path, out: out}
}

// Write writes one log line (a slog handler writes each record at once).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed != nil {
		if !w.recoveredLocked() {
			w.lost++
			return len(p), nil
		}
	}
	if _, err := w.out.Write(p); err != nil {
		w.failed, w.since, w.lost, w.lastErr = err, time.Now(), 1, err
	}
	return len(p), nil
}

// recoveredLocked writes the line that closes a failure; it reports
// whether the file took it (and the failure is over).
func (w *Writer) recoveredLocked() bool {
	var line []byte
	h := slog.NewTextHandler(writerFunc(func(b []byte) (int, error) { line = append(line, b...); return len(b), nil }), nil)
	slog.New(h).Warn("log lines were lost: the log file could not be written for a while",
		"lost", w.lost, "since", w.since.UTC().Format(time.RFC3339), "err", w.failed)
	if _, err := w.out.Write(line); err != nil {
		w.lastErr = err
		return false
	}
	w.failed, w.lost, w.lastErr = nil, 0, nil
	return true
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Problem says why the log cannot be written now, with the fix, or "" when
// it can: one sentence for /health, doctor and the dashboard.
func (w *Writer) Problem() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == nil {
		return ""
	}
	return fmt.Sprintf("the broker's log %s cannot be written since %s (%v); %d log lines lost so far: free space on its disk (or fix its permissions), and the log resumes by itself",
		w.path, w.since.UTC().Format(time.RFC3339), w.lastErr, w.lost)
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Close()
}
