package hosted

import (
	"context"
	"log/slog"
	"runtime"
	"time"
)

// Options tunes a [Pool]. Zero fields take the defaults written beside them.
type Options struct {
	Log          *slog.Logger  // the broker's logger; stderr lines and state changes go here
	Version      string        // Berth's version, sent to upstreams as the client version
	CallTimeout  time.Duration // a call's limit when its server sets no call_timeout (60s)
	StartTimeout time.Duration // start, initialize and first listing of a server (30s)
	StopGrace    time.Duration // wait after closing stdin before SIGTERM, and again before SIGKILL (1s)
	BackoffMin   time.Duration // delay before the first restart; doubles per crash (250ms)
	BackoffMax   time.Duration // longest delay between restarts (30s)
	MaxCrashes   int           // crashes within CrashWindow that mark a server failed (5)
	CrashWindow  time.Duration // (1m)
	StderrLines  int           // stderr lines kept per server (200)
	ListWait     time.Duration // how long a list waits for lazy servers to start (15s)
	GuardEvery   time.Duration // how often a project's servers are checked against their approvals (guard.go) (2s)
	// MaxStarting is how many server processes of the pool may be in
	// their start (process, handshake, first listing) at once; the others
	// wait their turn (starts.go). Default: the number of CPUs, at least 2.
	MaxStarting int
	// Home is the broker's BERTH_HOME: the server processes are recorded
	// there (RecordFile), and NewPool ends what the previous broker of
	// that home left running. "" records nothing (tests).
	Home string

	procs *tracker   // set by NewPool
	turns startTurns // set by NewPool: MaxStarting turns

	// CheckURL refuses the url of a url server (named server) before
	// each connection, with an error naming the fix; the server then
	// fails at once, without restarts. nil checks nothing.
	CheckURL func(ctx context.Context, server, url string) error
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.CallTimeout, time.Minute)
	def(&o.StartTimeout, 30*time.Second)
	def(&o.StopGrace, time.Second)
	def(&o.BackoffMin, 250*time.Millisecond)
	def(&o.BackoffMax, 30*time.Second)
	def(&o.CrashWindow, time.Minute)
	def(&o.ListWait, 15*time.Second)
	def(&o.GuardEvery, 2*time.Second)
	if o.MaxCrashes <= 0 {
		o.MaxCrashes = 5
	}
	if o.MaxStarting <= 0 {
		o.MaxStarting = max(2, runtime.NumCPU())
	}
	if o.StderrLines <= 0 {
		o.StderrLines = 200
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}
