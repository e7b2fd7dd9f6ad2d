// Package broker is Berth's daemon: it owns the home directory's lock,
// socket and database, mounts projects on their own loopback ports, serves
// the control API, and shuts everything down cleanly.
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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/loglimit"
	"github.com/berth-dev/berth/broker/loopback"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/peer"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shirou/gopsutil/v4/process"
)

// Options are the process-level hooks of Run.
type Options struct {
	Logger *slog.Logger
	// ConfigFile is the config file the settings were read from ("" for
	// none), for the log and /health.
	ConfigFile string
	// Ready is called once the control API is being served.
	Ready func()
	// Stopping is called once when the clean stop begins, whatever its
	// cause (signal, `berth stop`, idle timeout).
	Stopping func()
	// LogProblem, when set, says why the log file cannot be written now
	// ("" when it can), for /health and what shows it (doctor, the dashboard).
	LogProblem func() string
	// Lambdas runs the workflow gates' lambdas of every project in a child
	// process under limits (`berth serve` passes a runner that starts the
	// berth binary itself); nil: lambda checks fail, saying so.
	Lambdas workflow.Lambdas
}

// Run is the broker's whole life: it returns when ctx ends (a clean stop),
// when the idle timeout passes, or on a startup error.
func Run(ctx context.Context, cfg brokerconfig.Config, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	// Every record also goes to the in-memory rings that get_recent_logs
	// and the dashboard read; a line repeated past loglimit's bounds goes
	// to neither (a misbehaving client must not fill the disk).
	logs := logring.New(logring.Options{})
	limited := loglimit.New(logs.Handler(log.Handler()), loglimit.Options{})
	defer loglimit.Flush(limited) // the counts of windows still open
	log = slog.New(limited)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", cfg.Home, err)
	}
	homeWarning, err := secureHome(cfg.Home)
	if err != nil {
		return err
	}
	lock, err := acquireLock(filepath.Join(cfg.Home, api.LockName))
	if err != nil {
		return err
	}
	defer lock.Close()
	// A broker runs again: shims that lost the one stopped on purpose find
	// it, and the next crash is a crash again.
	if err := os.Remove(filepath.Join(cfg.Home, api.StoppedName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("remove the stop mark", "err", err)
	}

	sockPath := api.SocketPath(cfg.Home)
	sockLn, err := listenSocket(sockPath)
	if err != nil {
		return err
	}
	defer os.Remove(sockPath)
	defer sockLn.Close()

	db, warnings, err := openStore(cfg.Home, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if homeWarning != "" {
		log.Warn(homeWarning)
		warnings = append(warnings, homeWarning)
	}

	var tcpLn net.Listener
	if cfg.Listen != "" {
		tcpLn, err = loopback.ListenAddr(cfg.Listen) // 127.0.0.1 and [::1] alike: no other account takes either side
		switch {
		case err != nil && cfg.ListenOptional:
			log.Warn("TCP control API off: its address is taken (the socket still serves)", "listen", cfg.Listen, "err", err)
		case err != nil:
			return fmt.Errorf("listen %s: %w (set listen to another address, or empty to disable the TCP control API)", cfg.Listen, err)
		default:
			defer tcpLn.Close()
			if h, _, _ := net.SplitHostPort(cfg.Listen); !controlapi.IsLoopbackHost(h) {
				log.Warn("control API listens beyond loopback", "listen", cfg.Listen)
			}
		}
	}

	// Every connection is a file: another account's connections are
	// bounded by the budget, the owner's by the limit, raised as far as
	// the system allows.
	fileLimit := raiseFileLimit()
	pending := pendingBudget(fileLimit)
	budget := peer.NewBudget(pending)

	tokenOnly := cfg.TokenOnly || !peer.Supported()
	token, err := brokerToken(cfg, tokenOnly, log)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	started := time.Now()
	b := &Broker{cfg: cfg, log: log, db: db, started: started, stop: cancel, warnings: warnings, logs: logs, proc: selfProcess(), configFile: opts.ConfigFile, refused: &refusals{}, logProblem: opts.LogProblem}
	b.metrics = metrics.New(api.Version, b.metricsSnapshot)
	b.metrics.Servers(b.serversMetrics)
	b.hub = web.NewHub(b.dashboard, web.HubOptions{})
	logs.OnRecord(b.hub.Poke)
	idle := newIdleTimer(cfg.EffectiveIdleTimeout(), func() { cancel(errIdle) })
	b.mounts = &mounts{
		ctx: ctx, cfg: cfg, db: db, log: log, token: token,
		info:    project.ServerInfo{Version: api.Version, PID: os.Getpid(), StartedAt: started},
		entries: make(map[string]*entry),
		onEmpty: idle.set,
		logs:    logs,
		onCall:  b.toolCalled,
		onSession: func(m *mount, event string) {
			b.metrics.SessionEvent(m.id, event)
			b.hub.Poke()
		},
		schemas: mcp.NewSchemaCache(),
		lambdas: opts.Lambdas,
		servers: newServerDeps(cfg, db, log, logs, b.hub.Poke),
		watch:   watch.NewHub(),
		budget:  budget,
	}
	defer b.mounts.watch.Close() // after every mount's watcher (closeAll, below)
	idle.set(true)

	logins := newLogins(listenAddr(tcpLn), tokenOnly)
	apiOpts := controlapi.HandlerOptions{Dashboard: web.Handler(), Logger: log, Metrics: b.metrics.Handler(), Events: b.hub, Search: b.search, Login: logins, MaxBody: MaxBodyBytes}
	sockOpts := apiOpts
	sockOpts.AllowShutdown, sockOpts.IssueLogins = true, true
	sockOpts.Servers = &controlapi.ServerActions{Approve: b.ApproveServers, Revoke: b.RevokeServers, Restart: b.RestartServer} // the socket only, as /shutdown
	handler := controlapi.NewHandler(b, sockOpts)
	apiOpts.CheckHost, apiOpts.RefuseBrowsers, apiOpts.Token = true, true, token
	tcpHandler := controlapi.NewHandler(b, apiOpts)
	var servers []*http.Server
	var wg sync.WaitGroup
	serve := func(ln net.Listener, h http.Handler, guard *peer.Guard) {
		srv := &http.Server{
			Handler:           h,
			ReadHeaderTimeout: readTimeout,
			IdleTimeout:       controlIdleTimeout,
			BaseContext:       func(net.Listener) context.Context { return ctx },
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
			ConnState:         idle.socketState,
		}
		if guard != nil {
			srv.ConnState = idle.tcpState // a connection counts once the guard admits it
			guard.Install(srv)
			ln = guard.Listener(ln)
		}
		servers = append(servers, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				cancel(fmt.Errorf("serve %s: %w", ln.Addr(), err))
			}
		}()
	}
	serve(sockLn, handler, nil) // the socket is guarded by its file mode
	if tcpLn != nil {
		serve(tcpLn, tcpHandler, peer.NewGuard(peer.Options{Token: token, Admit: logins.admits, TokenOnly: tokenOnly, Name: "control", Logger: log,
			Budget: budget, Admitted: idle.track}))
	}
	log.Info("broker ready", "pid", os.Getpid(), "home", cfg.Home, "socket", sockPath, "listen", cfg.Listen, "version", api.Version, "config", opts.ConfigFile,
		"open_file_limit", fileLimit, "pending_connections", pending)
	if opts.Ready != nil {
		opts.Ready()
	}

	wg.Add(3)
	go func() {
		defer wg.Done()
		b.cleanStaleStateFiles(ctx)
		b.remountPinned(ctx)
	}()
	go func() { defer wg.Done(); b.reapLoop(ctx) }()
	go func() { defer wg.Done(); b.hub.Run(ctx) }()

	<-ctx.Done()
	cause := context.Cause(ctx)
	log.Info("broker stopping", "why", stopReason(cause))
	if onPurpose := cause == nil || errors.Is(cause, context.Canceled) || errors.As(cause, new(stopRequested)); onPurpose {
		markStopped(cfg.Home, stopReason(cause), log) // before the shims see their sessions end
	}
	if opts.Stopping != nil {
		opts.Stopping()
	}
	idle.stop()
	// Everything below is bounded so that the process exits within 5 s.
	shutdownCtx, stop := context.WithTimeout(context.Background(), shutdownTimeout)
	defer stop()
	for _, srv := range servers {
		srv.SetKeepAlivesEnabled(false)
	}
	b.hub.Close() // end the dashboards' event streams: Shutdown waits for them
	b.mounts.closeAll(shutdownCtx)
	b.mounts.servers.close(shutdownCtx) // after the mounts: what they left running
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			srv.Close()
		}
	}
	wg.Wait()
	log.Info("broker stopped")
	if cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, errIdle) && !errors.As(cause, new(stopRequested)) {
		return cause
	}
	return nil
}

// controlIdleTimeout closes a control connection kept alive with no
// request for that long.
const controlIdleTimeout = 2 * time.Minute

// pendingBudget is how many connections not yet known to be the owner's
// the TCP listeners keep open together (peer.Budget): a quarter of the
// open-file limit, between 16 and 1024 (256 when the limit is unknown).
func pendingBudget(fileLimit uint64) int {
	if fileLimit == 0 {
		return 256
	}
	return int(min(max(fileLimit/4, 16), 1024))
}

// markStopped writes the home's stop mark: the broker was stopped on
// purpose, so the shims it served wait for the next one instead of
// starting their own (an idle broker has no shims and leaves none).
func markStopped(home, why string, log *slog.Logger) {
	mark := filepath.Join(home, api.StoppedName)
	if err := os.WriteFile(mark, []byte(why+"\n"), 0o600); err != nil {
		log.Warn("write the stop mark: shims may start another broker", "file", mark, "err", err)
	}
}

// shutdownTimeout bounds a clean stop: sessions ended, ports and socket
// released, store closed.
const shutdownTimeout = 4 * time.Second

var errIdle = errors.New("idle timeout")

// stopRequested is the cause of a stop asked for over POST /shutdown.
type stopRequested struct{ reason string }

func (e stopRequested) Error() string { return "stop requested: " + e.reason }

func stopReason(cause error) string {
	switch {
	case cause == nil, errors.Is(cause, context.Canceled):
		return "signal"
	default:
		return cause.Error()
	}
}

// Broker implements the control API over the mounts table.
type Broker struct {
	cfg     brokerconfig.Config
	log     *slog.Logger
	db      *store.DB
	started time.Time
	mounts  *mounts
	stop    context.CancelCauseFunc // ends Run cleanly with a cause
	// warnings are what startup repaired or could not recover; set before
	// the control API serves, read-only after.
	warnings []string
	logs     *logring.Ring    // recent log records, per project and all
	metrics  *metrics.Metrics // /metrics
	hub      *web.Hub         // the dashboard's event stream
	proc     *process.Process // this process, for its RSS; nil if unknown
	// configFile is the file the settings came from ("" for none).
	configFile string
	refused    *refusals // projects whose attach failed, for the dashboard
	logProblem func() string
}

// Health implements controlapi.Backend.
func (b *Broker) Health() api.Health {
	h := api.Health{
		Status: "ok", Version: api.Version, Protocol: api.Protocol(), PID: os.Getpid(), StartedAt: b.started.UTC(),
		UptimeSeconds: time.Since(b.started).Seconds(), Projects: b.mounts.count(), Home: b.cfg.Home,
		RSSBytes: b.rss(),
	}
	if b.cfg.EffectiveIdleTimeout() > 0 {
		h.IdleTimeout = b.cfg.EffectiveIdleTimeout().String()
	}
	h.Autostarted = b.cfg.Autostarted
	h.PortStart, h.PortEnd = b.cfg.PortStart, b.cfg.PortEnd
	h.Warnings = b.warnings
	h.ConfigFile = b.configFile
	h.Refused = b.refused.snapshot()
	if b.logProblem != nil {
		h.LogError = b.logProblem()
	}
	return h
}

// Shutdown implements controlapi.Backend: it begins a clean stop, or with
// IfUnheld refuses when the broker serves anyone else or was not
// auto-started (a service manager or a user runs it: they restart it).
func (b *Broker) Shutdown(req api.ShutdownRequest) (api.ShutdownResponse, error) {
	reason := strings.TrimSpace(req.Reason)
	if reason == "" {
		reason = "asked over the control API"
	}
	if req.IfUnheld {
		if !b.cfg.Autostarted {
			return api.ShutdownResponse{}, api.Errorf(http.StatusConflict, api.CodeNotAutostarted,
				"this broker was not started by a shim: restart it yourself (`berth stop`, or your service manager)")
		}
		if n := b.mounts.closeIfUnheld(req.ExceptLease); n > 0 {
			return api.ShutdownResponse{}, api.Errorf(http.StatusConflict, api.CodeStillHeld,
				"%d other sessions or pins are attached: the broker keeps running (stop it with `berth stop` when they are done)", n)
		}
	}
	b.log.Info("stop requested", "reason", reason)
	b.stop(stopRequested{reason})
	return api.ShutdownResponse{PID: os.Getpid()}, nil
}

// Projects implements controlapi.Backend.
func (b *Broker) Projects() []api.Project { return b.mounts.list() }

// Project implements controlapi.Backend.
func (b *Broker) Project(id string) (api.Project, error) {
	m, p, err := b.mounts.get(id)
	if err != nil {
		return p, err
	}
	p.Detail = m.engine.Status()
	return p, nil
}

// Attach implements controlapi.Backend.
func (b *Broker) Attach(ctx context.Context, req api.AttachRequest) (api.AttachResponse, error) {
	start := time.Now()
	resp, err := b.mounts.attach(ctx, req)
	b.metrics.Attach(err == nil, time.Since(start))
	if b.refused.note(req.Root, err) {
		b.log.Warn("project refused", "root", req.Root, "err", err)
	}
	return resp, err
}

// Detach implements controlapi.Backend.
func (b *Broker) Detach(id, lease string) error { return b.mounts.detach(id, lease) }

// MCPHandler implements controlapi.Backend.
func (b *Broker) MCPHandler(id, lease string) (http.Handler, error) {
	return b.mounts.shimRoute(id, lease, api.ProcessAlive)
}

// remountPinned mounts again the projects `berth attach` pinned before a restart.
func (b *Broker) remountPinned(ctx context.Context) {
	recs, bad, err := b.db.Projects()
	if err != nil {
		b.log.Error("read registry", "err", err)
		return
	}
	for _, id := range bad {
		b.log.Warn("unreadable registry record skipped", "project", id)
	}
	for _, rec := range recs {
		if !rec.Pinned || ctx.Err() != nil {
			continue
		}
		_, err := b.mounts.attach(ctx, api.AttachRequest{Root: rec.Root, Kind: api.HolderCLI})
		if err != nil {
			b.refused.note(rec.Root, err)
			b.log.Warn("pinned project not mounted", "project", rec.ID, "root", rec.Root, "err", err)
			continue
		}
		b.metrics.RestartRecovered()
	}
}

func (b *Broker) reapLoop(ctx context.Context) {
	t := time.NewTicker(b.cfg.ReapInterval)
	defer t.Stop()
	v := time.NewTicker(min(b.cfg.ReapInterval, vanishInterval))
	defer v.Stop()
	for ticks := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.mounts.reap(func(pid int) bool { return api.ProcessAlive(pid) })
			b.mounts.retryDegraded()
		case <-v.C:
			b.mounts.dropVanished(ctx)
			if ticks++; ticks%forgetEvery == 1 {
				b.mounts.forgetRemovedWorktrees()
			}
		}
	}
}

func sortProjects(ps []api.Project) {
	slices.SortFunc(ps, func(a, b api.Project) int { return strings.Compare(a.Root, b.Root) })
}
