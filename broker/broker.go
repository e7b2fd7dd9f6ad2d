// Package broker is Berth's daemon: its lifecycle and wiring. It owns the
// home directory's lock, socket and database, builds the mount table
// (broker/mounttable) and serves the control API over it, and shuts
// everything down in order (Run, run.go).
//
// # Lock order
//
// The package has one lock of its own, the idle timer's mu, a leaf: the
// mount table takes it under its own lock when it says whether it is empty
// (its rank in lockranks.go, after the table's, checked in tests by
// broker/lockorder). The table's order is in broker/mounttable's doc.
package broker

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/mounttable"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/web"
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

// Broker implements the control API over the mount table.
type Broker struct {
	cfg     brokerconfig.Config
	log     *slog.Logger
	db      *store.DB
	started time.Time
	mounts  *mounttable.Table
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
	idle       *idleTimer // ends Run after idle_timeout with nothing held or connected
}

// Health implements controlapi.Backend.
func (b *Broker) Health() api.Health {
	h := api.Health{
		Status: "ok", Version: api.Version, Protocol: api.Protocol(), PID: os.Getpid(), StartedAt: b.started.UTC(),
		UptimeSeconds: time.Since(b.started).Seconds(), Projects: b.mounts.Count(), Home: b.cfg.Home,
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
		if n := b.mounts.CloseIfUnheld(req.ExceptLease); n > 0 {
			return api.ShutdownResponse{}, api.Errorf(http.StatusConflict, api.CodeStillHeld,
				"%d other sessions or pins are attached: the broker keeps running (stop it with `berth stop` when they are done)", n)
		}
	}
	b.log.Info("stop requested", "reason", reason)
	b.stop(stopRequested{reason})
	return api.ShutdownResponse{PID: os.Getpid()}, nil
}

// Projects implements controlapi.Backend.
func (b *Broker) Projects() []api.Project { return b.mounts.List() }

// Project implements controlapi.Backend.
func (b *Broker) Project(id string) (api.Project, error) {
	m, p, err := b.mounts.Get(id)
	if err != nil {
		return p, err
	}
	p.Detail = m.Engine().Status()
	return p, nil
}

// Attach implements controlapi.Backend.
func (b *Broker) Attach(ctx context.Context, req api.AttachRequest) (api.AttachResponse, error) {
	start := time.Now()
	resp, err := b.mounts.Attach(ctx, req)
	b.metrics.Attach(err == nil, time.Since(start))
	if b.refused.note(req.Root, err) {
		b.log.Warn("project refused", "root", req.Root, "err", err)
	}
	return resp, err
}

// Detach implements controlapi.Backend.
func (b *Broker) Detach(id, lease string) error { return b.mounts.Detach(id, lease) }

// MCPHandler implements controlapi.Backend.
func (b *Broker) MCPHandler(id, lease string) (http.Handler, error) {
	return b.mounts.ShimRoute(id, lease, api.ProcessAlive)
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
		_, err := b.mounts.Attach(ctx, api.AttachRequest{Root: rec.Root, Kind: api.HolderCLI})
		if err != nil {
			b.refused.note(rec.Root, err)
			b.log.Warn("pinned project not mounted", "project", rec.ID, "root", rec.Root, "err", err)
			continue
		}
		b.metrics.RestartRecovered()
	}
}
