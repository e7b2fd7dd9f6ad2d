package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/loglimit"
	"github.com/berth-dev/berth/broker/loopback"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/mounttable"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/web"
)

// Run is the broker's whole life: it returns when ctx ends (a clean stop),
// when the idle timeout passes, or on a startup error.
//
// It starts in this order: the log, the home (its lock taken), the
// control API's listeners (bind first: shims connect at once), the store,
// the broker and its mount table, the control API served, then the
// background work (pinned projects mounted again, the table's housekeeping, the
// dashboard's events). It stops in shutdown's order, then releases what
// it took in the reverse of the above (the deferred calls).
func Run(ctx context.Context, cfg brokerconfig.Config, opts Options) error {
	log, logs, flush := newBrokerLog(opts.Logger)
	defer flush()
	if err := cfg.Validate(); err != nil {
		return err
	}
	homeWarning, release, err := claimHome(cfg.Home, log)
	if err != nil {
		return err
	}
	defer release()
	ls, err := listenControl(cfg, log)
	if err != nil {
		return err
	}
	defer ls.close()
	db, warnings, err := openStore(cfg.Home, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if homeWarning != "" {
		log.Warn(homeWarning)
		warnings = append(warnings, homeWarning)
	}

	// Every connection is a file: another account's connections are
	// bounded by the budget, the owner's by the limit, raised as far as
	// the system allows.
	fileLimit := raiseFileLimit()
	pending := pendingBudget(fileLimit)
	access := access{budget: peer.NewBudget(pending), tokenOnly: cfg.TokenOnly || !peer.Supported()}
	if access.token, err = brokerToken(cfg, access.tokenOnly, log); err != nil {
		return err
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchHub := watch.NewHub()
	b := newBroker(ctx, cancel, cfg, opts, log, logs, db, warnings, access, watchHub)
	defer watchHub.Close() // after every mount's watcher (CloseAll, in shutdown)

	var wg sync.WaitGroup // every goroutine of Run: the control API's servers and the background work
	servers := b.serveControl(ctx, ls, access, &wg)
	log.Info("broker ready", "pid", os.Getpid(), "home", cfg.Home, "socket", ls.sockPath, "listen", cfg.Listen, "version", api.Version, "config", opts.ConfigFile,
		"open_file_limit", fileLimit, "pending_connections", pending)
	if opts.Ready != nil {
		opts.Ready()
	}
	b.startBackground(ctx, &wg)

	<-ctx.Done()
	cause := context.Cause(ctx)
	b.shutdown(cause, servers, opts.Stopping)
	wg.Wait()
	log.Info("broker stopped")
	if stoppedOnPurpose(cause) || errors.Is(cause, errIdle) {
		return nil
	}
	return cause
}

// newBrokerLog wraps log (slog.Default when nil) so that every record also
// goes to the in-memory rings that get_recent_logs and the dashboard read;
// a line repeated past loglimit's bounds goes to neither (a misbehaving
// client must not fill the disk). flush logs the counts of the windows
// still open.
func newBrokerLog(log *slog.Logger) (_ *slog.Logger, logs *logring.Ring, flush func()) {
	if log == nil {
		log = slog.Default()
	}
	logs = logring.New(logring.Options{})
	limited := loglimit.New(logs.Handler(log.Handler()), loglimit.Options{})
	return slog.New(limited), logs, func() { loglimit.Flush(limited) }
}

// claimHome creates home (0700) and takes its lock, which release lets
// go; warning says what securing it found. A broker runs again: the stop
// mark goes, so that shims that lost the one stopped on purpose find this
// one, and the next crash is a crash again.
func claimHome(home string, log *slog.Logger) (warning string, release func(), err error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", nil, fmt.Errorf("create home %s: %w", home, err)
	}
	warning, err = secureHome(home)
	if err != nil {
		return "", nil, err
	}
	lock, err := acquireLock(filepath.Join(home, api.LockName))
	if err != nil {
		return "", nil, err
	}
	if err := os.Remove(filepath.Join(home, api.StoppedName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("remove the stop mark", "err", err)
	}
	return warning, func() { lock.Close() }, nil
}

// controlListeners are the control API's listeners: the home's socket,
// and the TCP address of the listen setting (nil when off).
type controlListeners struct {
	sockPath string
	sock     net.Listener
	tcp      net.Listener
}

// listenControl binds the control API's listeners. A taken TCP address
// fails the start, unless listen is optional: then the socket serves alone.
func listenControl(cfg brokerconfig.Config, log *slog.Logger) (*controlListeners, error) {
	ls := &controlListeners{sockPath: api.SocketPath(cfg.Home)}
	var err error
	if ls.sock, err = listenSocket(ls.sockPath); err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		return ls, nil
	}
	tcp, err := loopback.ListenAddr(cfg.Listen) // 127.0.0.1 and [::1] alike: no other account takes either side
	switch {
	case err != nil && cfg.ListenOptional:
		log.Warn("TCP control API off: its address is taken (the socket still serves)", "listen", cfg.Listen, "err", err)
	case err != nil:
		ls.close()
		return nil, fmt.Errorf("listen %s: %w (set listen to another address, or empty to disable the TCP control API)", cfg.Listen, err)
	default:
		ls.tcp = tcp
		if h, _, _ := net.SplitHostPort(cfg.Listen); !controlapi.IsLoopbackHost(h) {
			log.Warn("control API listens beyond loopback", "listen", cfg.Listen)
		}
	}
	return ls, nil
}

// close closes the listeners and removes the socket's file.
func (ls *controlListeners) close() {
	if ls.tcp != nil {
		ls.tcp.Close()
	}
	ls.sock.Close()
	os.Remove(ls.sockPath)
}

// access is who may use the TCP listeners (the control API's and the
// projects' ports): the owner's account, or whoever sends the token; with
// tokenOnly, only the latter. budget bounds the connections not yet known
// to be the owner's, every TCP listener's together.
type access struct {
	token     string
	tokenOnly bool
	budget    *peer.Budget
}

// newBroker wires the broker: its metrics, the dashboard's events, the
// idle timer (which ends ctx through cancel) and the mount table, whose
// mounts watch their files through watchHub.
func newBroker(ctx context.Context, cancel context.CancelCauseFunc, cfg brokerconfig.Config, opts Options, log *slog.Logger, logs *logring.Ring,
	db *store.DB, warnings []string, access access, watchHub *watch.Hub) *Broker {
	started := time.Now()
	b := &Broker{cfg: cfg, log: log, db: db, started: started, stop: cancel, warnings: warnings, logs: logs, proc: selfProcess(),
		configFile: opts.ConfigFile, refused: &refusals{}, logProblem: opts.LogProblem}
	b.metrics = metrics.New(api.Version, b.metricsSnapshot)
	b.metrics.Servers(b.serversMetrics)
	b.hub = web.NewHub(b.dashboard, web.HubOptions{})
	logs.OnRecord(b.hub.Poke)
	b.idle = newIdleTimer(cfg.EffectiveIdleTimeout(), func() { cancel(errIdle) })
	var indexes contentIndexes
	b.mounts = mounttable.New(mounttable.Deps{
		Ctx: ctx, Config: cfg, DB: db, Log: log, Logs: logs, Token: access.token, Budget: access.budget, Watch: watchHub, Lambdas: opts.Lambdas,
		Info:        project.ServerInfo{Version: api.Version, PID: os.Getpid(), StartedAt: started},
		SharedIndex: indexes.of,
		OnEmpty:     b.idle.set,
		OnCall:      b.toolCalled,
		OnSession: func(m *mounttable.Mount, event string) {
			b.metrics.SessionEvent(m.ID(), event)
			b.hub.Poke()
		},
		OnChange: b.hub.Poke,
	})
	b.idle.set(true)
	return b
}

// serveControl serves the control API on each listener, each goroutine
// counted in wg, and returns the servers. The socket, which its file mode
// guards, also stops the broker, issues dashboard logins and acts on the
// hosted servers; TCP checks the Host, refuses browsers, and admits the
// owner's account or the token (peer.Guard).
func (b *Broker) serveControl(ctx context.Context, ls *controlListeners, access access, wg *sync.WaitGroup) []*http.Server {
	logins := newLogins(listenAddr(ls.tcp), access.tokenOnly)
	common := controlapi.HandlerOptions{Dashboard: web.Handler(), Logger: b.log, Metrics: b.metrics.Handler(), Events: b.hub, Search: b.search, Login: logins, MaxBody: mcpserve.MaxBodyBytes}

	sockOpts := common
	sockOpts.AllowShutdown, sockOpts.IssueLogins = true, true
	sockOpts.Servers = &controlapi.ServerActions{Approve: b.ApproveServers, Revoke: b.RevokeServers, Restart: b.RestartServer}
	sock := b.controlServer(ctx, controlapi.NewHandler(b, sockOpts), b.idle.socketState)
	servers := []*http.Server{sock}
	b.serveOn(sock, ls.sock, wg)
	if ls.tcp == nil {
		return servers
	}

	tcpOpts := common
	tcpOpts.CheckHost, tcpOpts.RefuseBrowsers, tcpOpts.Token = true, true, access.token
	tcp := b.controlServer(ctx, controlapi.NewHandler(b, tcpOpts), b.idle.tcpState) // a connection counts once the guard admits it
	guard := peer.NewGuard(peer.Options{Token: access.token, Admit: logins.admits, TokenOnly: access.tokenOnly, Name: "control", Logger: b.log,
		Budget: access.budget, Admitted: b.idle.track})
	guard.Install(tcp)
	b.serveOn(tcp, guard.Listener(ls.tcp), wg)
	return append(servers, tcp)
}

// controlServer is an http.Server of the control API: its requests' context
// is the broker's, and each connection's state goes to connState (the idle
// timer).
func (b *Broker) controlServer(ctx context.Context, h http.Handler, connState func(net.Conn, http.ConnState)) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: mcpserve.ReadTimeout,
		IdleTimeout:       controlIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelDebug),
		ConnState:         connState,
	}
}

// serveOn serves srv on ln in a goroutine counted in wg; a failure other
// than the server's close stops the broker with it.
func (b *Broker) serveOn(srv *http.Server, ln net.Listener, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.stop(fmt.Errorf("serve %s: %w", ln.Addr(), err))
		}
	}()
}

// startBackground starts the broker's background work, each goroutine
// counted in wg and ended by ctx: pinned projects mounted again (after the
// stale state files are cleaned), the table's housekeeping, the dashboard's events.
func (b *Broker) startBackground(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(3)
	go func() {
		defer wg.Done()
		b.cleanStaleStateFiles(ctx)
		b.remountPinned(ctx)
	}()
	go func() { defer wg.Done(); b.mounts.Housekeep(ctx) }()
	go func() { defer wg.Done(); b.hub.Run(ctx) }()
}

// shutdown stops the broker for cause, in this order, bounded so that the
// process exits within 5 s: the stop mark (before the shims see their
// sessions end), the stopping hook, the idle timer; no new keep-alives on
// the control API; the dashboards' event streams (the servers' Shutdown
// waits for them); every mount, then the hosted servers the mounts left
// running; the control API's servers.
func (b *Broker) shutdown(cause error, servers []*http.Server, stopping func()) {
	b.log.Info("broker stopping", "why", stopReason(cause))
	if stoppedOnPurpose(cause) {
		markStopped(b.cfg.Home, stopReason(cause), b.log)
	}
	if stopping != nil {
		stopping()
	}
	b.idle.stop()
	ctx, stop := context.WithTimeout(context.Background(), shutdownTimeout)
	defer stop()
	for _, srv := range servers {
		srv.SetKeepAlivesEnabled(false)
	}
	b.hub.Close()
	b.mounts.CloseAll(ctx) // the hosted servers the mounts left running stop last
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}
}

// stoppedOnPurpose reports whether cause is a stop someone asked for (a
// signal, `berth stop`), not an idle timeout or a failure.
func stoppedOnPurpose(cause error) bool {
	return cause == nil || errors.Is(cause, context.Canceled) || errors.As(cause, new(stopRequested))
}
