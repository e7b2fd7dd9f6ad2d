package hosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream supervises one hosted server: its process (or url connection)
// and the MCP client session to it, restarted with backoff when it ends.
// Its run goroutine owns the process; other goroutines read the state under
// mu and wait for changes on the changed channel. mu is a leaf lock:
// nothing is called while it is held.
type upstream struct {
	label string // the server's name in logs and errors
	def   config.Server
	cwd   string
	// approved are the project's files the server runs, as its approval
	// covers them: checked before each start (none for the broker
	// config's servers).
	approved []approvedFile
	opts     *Options
	log      *slog.Logger
	stderr   *ring
	client   *mcp.Client
	calls    callers
	echo     echoes   // share: user: the holding projects' own log rings
	watch    watchers // sessions subscribed to its resources (subscribe.go)
	relay    relays   // the holding projects' sessions, for the server's log messages
	rss      rssCache

	ctx      context.Context // cancelled by stop
	cancel   context.CancelFunc
	startc   chan struct{} // cap 1: start a lazy server
	restartc chan struct{} // cap 1: start a failed or running server again
	pokec    chan struct{} // cap 1: the server's lists changed
	done     chan struct{} // closed when run returns

	mu        sync.Mutex
	state     State
	gen       *generation
	changed   chan struct{} // closed and replaced on every change of state or lists
	lists     *lists        // the last listing; nil when not running or restarting
	version   uint64        // bumped with every new listing
	restarts  int
	taken     uint64      // restart requests run has taken (restartWait)
	crashes   []time.Time // within CrashWindow
	lastErr   string
	refused   bool // the last start was refused before it was tried (Options.CheckURL)
	startedAt time.Time
	subs      map[int]func()
	nextSub   int
}

// generation is one run of the server: the client session and, for a
// command, its process.
type generation struct {
	cs    *mcp.ClientSession
	raw   *stdioConn    // the stdio connection under cs, for calls forwarded as bytes; nil for a url server
	p     *proc         // nil for a url server
	ended chan struct{} // closed once the process exited or the connection ended
}

// lists is what a server offers, as listed after it started or changed.
type lists struct {
	tools     []*mcp.Tool // schemas as json.RawMessage
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func newUpstream(label string, def config.Server, cwd string, approved []approvedFile, opts *Options, log *slog.Logger) *upstream {
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstream{
		label: label, def: def, cwd: cwd, approved: approved, opts: opts, log: log,
		stderr: newRing(opts.StderrLines),
		ctx:    ctx, cancel: cancel,
		startc: make(chan struct{}, 1), restartc: make(chan struct{}, 1), pokec: make(chan struct{}, 1),
		done:  make(chan struct{}),
		state: StateStopped, changed: make(chan struct{}),
		subs: map[int]func(){},
	}
	u.client = u.newClient()
	go u.run()
	return u
}

// poke sends on a cap-1 channel without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// start asks a lazy server to start; it is a no-op once it has.
func (u *upstream) start() { poke(u.startc) }

// restart starts a failed server again with a clean crash history, or
// ends a running one's process and starts it again, and reports whether
// the server was in one of those states. A server starting, waiting out
// a backoff or not started yet is left alone. The request is a poke that
// run takes while it waits on a failed server or serves a running one; a
// running server that ends by itself before run takes it restarts as
// after a crash and then once more.
func (u *upstream) restart() bool {
	u.mu.Lock()
	ok := u.state == StateFailed || u.state == StateRunning
	u.mu.Unlock()
	if ok {
		poke(u.restartc)
	}
	return ok
}

// restartWait asks for a restart as restart does and waits until the
// server serves again from a new process (or connection), or has failed
// or waits for approval again (an error saying why), or ctx ends (an
// error naming its state then). restarted is restart's answer: false
// leaves the server alone and waits for nothing.
func (u *upstream) restartWait(ctx context.Context) (restarted bool, err error) {
	u.mu.Lock()
	old, taken := u.gen, u.taken
	u.mu.Unlock()
	if !u.restart() {
		return false, nil
	}
	for {
		u.mu.Lock()
		st, g, ch, lastErr, done := u.state, u.gen, u.changed, u.lastErr, u.taken > taken
		u.mu.Unlock()
		switch {
		case done && st == StateRunning && g != old && !g.isEnded():
			return true, nil
		case done && st == StateFailed:
			return true, fmt.Errorf("hosted server %q failed to start again: %s", u.label, lastErr)
		case done && st == StateNeedsApproval:
			return true, fmt.Errorf("hosted server %q waits for approval: %s", u.label, lastErr)
		case u.ctx.Err() != nil:
			return true, fmt.Errorf("hosted server %q was stopped while it restarted", u.label)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if lastErr != "" && st == StateRestarting {
				return true, fmt.Errorf("hosted server %q is still %s (last error: %s): %w", u.label, st, lastErr, ctx.Err())
			}
			return true, fmt.Errorf("hosted server %q is still %s: %w", u.label, st, ctx.Err())
		}
	}
}

// errRestartAsked ends a running generation that a restart was asked of.
var errRestartAsked = errors.New("restart asked for")

// stop ends the server and waits until its process is gone (or ctx ends).
func (u *upstream) stop(ctx context.Context) error {
	u.cancel()
	select {
	case <-u.done: // never started, failed, or already stopped: nothing to wait for
		return nil
	default:
	}
	select {
	case <-u.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop hosted server %q: %w", u.label, ctx.Err())
	}
}

func (u *upstream) run() {
	defer close(u.done)
	if !u.await(u.startc) {
		u.stopped()
		return
	}
	for {
		if err := verifyFiles(u.approved); err != nil {
			// Not a crash: what would run is not what was approved.
			u.update(func() { u.state, u.gen, u.lists, u.lastErr = StateNeedsApproval, nil, nil, err.Error(); u.version++ })
			u.log.Warn("hosted server not started: a file it runs changed since its approval", "server", u.label, "err", err)
			if !u.await(u.restartc) {
				u.stopped()
				return
			}
			continue
		}
		g, ls, err := u.connect()
		if err != nil && u.ctx.Err() != nil {
			u.stopped() // stopped while starting: not a crash
			return
		}
		if err == nil {
			u.running(g, ls)
			if err = u.serve(g); err == nil {
				u.stopped()
				return
			}
			if errors.Is(err, errRestartAsked) {
				u.update(func() {
					u.state, u.gen, u.lists, u.crashes = StateStarting, nil, nil, nil
					u.restarts++
					u.taken++
					u.version++
				})
				u.log.Info("hosted server restarted as asked", "server", u.label)
				continue
			}
		}
		delay, failed := u.crashed(err)
		if failed {
			if !u.await(u.restartc) {
				u.stopped()
				return
			}
			u.update(func() { u.state = StateStarting; u.restarts++; u.taken++ })
			continue
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-u.ctx.Done():
			t.Stop()
			u.stopped()
			return
		}
	}
}

// await waits for c; false means the server is being stopped.
func (u *upstream) await(c chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-u.ctx.Done():
		return false
	}
}

// serve waits for the generation to end, relisting on change
// notifications. nil means it was stopped; an error says how it ended.
func (u *upstream) serve(g *generation) error {
	for {
		select {
		case <-u.ctx.Done():
			g.close(u.opts.StopGrace)
			return nil
		case <-g.ended:
			return u.ended(g)
		case <-u.restartc:
			g.close(u.opts.StopGrace)
			return errRestartAsked
		case <-u.pokec:
			ctx, cancel := context.WithTimeout(u.ctx, u.opts.StartTimeout)
			ls, err := list(ctx, g.cs)
			cancel()
			if err != nil {
				u.log.Warn("hosted server: relist after a change failed", "server", u.label, "err", err)
				continue
			}
			u.update(func() { u.lists = ls; u.version++ })
		}
	}
}

// ended closes what is left of a generation that ended by itself and
// describes how it ended.
func (u *upstream) ended(g *generation) error {
	desc := "the connection ended"
	if g.p != nil {
		// The connection may end a moment before the exit is reaped.
		if g.p.wait(time.Second) {
			desc = g.p.exitText()
		} else {
			desc = "it closed its stdout"
		}
		g.p.stop(u.opts.StopGrace) // the rest of its group, and the leader if it lingers
	}
	go g.cs.Close()
	if last := u.stderr.last(); last != "" {
		return fmt.Errorf("%s; last stderr: %q", desc, last)
	}
	return errors.New(desc)
}

func (g *generation) close(grace time.Duration) {
	if g.p != nil {
		g.p.stop(grace)
	}
	if g.cs != nil {
		closed := make(chan struct{})
		go func() { g.cs.Close(); close(closed) }()
		select { // a session with a request still in a handler may not close at once
		case <-closed:
		case <-time.After(grace):
		}
	}
}

// isEnded reports whether the generation has ended.
func (g *generation) isEnded() bool {
	select {
	case <-g.ended:
		return true
	default:
		return false
	}
}

// update changes the state under mu, wakes waiters and tells subscribers.
func (u *upstream) update(change func()) {
	u.mu.Lock()
	change()
	close(u.changed)
	u.changed = make(chan struct{})
	subs := make([]func(), 0, len(u.subs))
	for _, f := range u.subs {
		subs = append(subs, f)
	}
	u.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

func (u *upstream) running(g *generation, ls *lists) {
	u.update(func() {
		u.state, u.gen, u.lists, u.startedAt = StateRunning, g, ls, time.Now()
		u.version++
	})
	pid := 0
	if g.p != nil {
		pid = g.p.pid
	}
	u.log.Info("hosted server running", "server", u.label, "pid", pid, "tools", len(ls.tools))
	go u.resubscribe(g)
}

func (u *upstream) stopped() {
	u.update(func() { u.state, u.gen, u.lists = StateStopped, nil, nil; u.version++ })
}

// crashed records an unrequested end (or a failed start) and decides: wait
// delay and restart, or mark the server failed. A command that cannot be
// run (missing, not executable) fails the server at once: trying again
// would fail the same way until the user installs it or corrects the
// config.
func (u *upstream) crashed(err error) (delay time.Duration, failed bool) {
	now := time.Now()
	unrunnable := errors.Is(err, errUnrunnable)
	u.update(func() {
		u.crashes = slices.DeleteFunc(u.crashes, func(t time.Time) bool { return now.Sub(t) > u.opts.CrashWindow })
		u.crashes = append(u.crashes, now)
		u.lastErr = err.Error()
		u.gen = nil
		u.refused = errors.As(err, new(refusedError))
		if unrunnable || u.refused || len(u.crashes) >= u.opts.MaxCrashes {
			failed = true
			u.state, u.lists, u.crashes = StateFailed, nil, nil
			u.version++
			return
		}
		u.state = StateRestarting
		u.restarts++
		delay = backoff(len(u.crashes), u.opts.BackoffMin, u.opts.BackoffMax)
	})
	switch {
	case errors.As(err, new(refusedError)):
		u.log.Error("hosted server refused, not started", "server", u.label, "err", err)
	case unrunnable:
		u.log.Error("hosted server failed: its command cannot be run, not restarted", "server", u.label, "err", err)
	case failed:
		u.log.Error("hosted server failed: too many crashes, not restarted", "server", u.label,
			"crashes", u.opts.MaxCrashes, "window", u.opts.CrashWindow, "err", err)
	default:
		u.log.Warn("hosted server ended; restarting", "server", u.label, "err", err, "backoff", delay)
	}
	return delay, failed
}

// subscribe calls f after every change of state or lists until the
// returned func is called. f must not block.
func (u *upstream) subscribe(f func()) (cancel func()) {
	return listen(&u.mu, &u.subs, &u.nextSub, f)
}

// listen adds f to *m under mu with the next id; cancel removes it.
func listen[F any](mu *sync.Mutex, m *map[int]F, next *int, f F) (cancel func()) {
	mu.Lock()
	defer mu.Unlock()
	if *m == nil {
		*m = map[int]F{}
	}
	id := *next
	*next++
	(*m)[id] = f
	return func() {
		mu.Lock()
		delete(*m, id)
		mu.Unlock()
	}
}

// session returns a running generation, starting a lazy server and
// waiting out a start or restart, until ctx ends.
func (u *upstream) session(ctx context.Context) (*generation, error) {
	u.start()
	for {
		u.mu.Lock()
		st, g, ch, lastErr, refused := u.state, u.gen, u.changed, u.lastErr, u.refused
		u.mu.Unlock()
		switch {
		case st == StateRunning && !g.isEnded():
			return g, nil
		case st == StateFailed && refused:
			return nil, fmt.Errorf("it is not started: %s", lastErr)
		case st == StateFailed && strings.Contains(lastErr, errUnrunnable.Error()):
			return nil, fmt.Errorf("it failed and is not restarted: %s", lastErr)
		case st == StateFailed:
			return nil, fmt.Errorf("it failed (crashed %d times within %s) and is not restarted; last error: %s", u.opts.MaxCrashes, u.opts.CrashWindow, lastErr)
		case st == StateNeedsApproval:
			return nil, fmt.Errorf("it waits for approval: %s", lastErr)
		case u.ctx.Err() != nil:
			return nil, errors.New("it is stopped")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// snapshot returns the current lists and their version.
func (u *upstream) snapshot() (*lists, uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lists, u.version
}
