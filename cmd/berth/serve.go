package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/logfile"
	"github.com/berth-dev/berth/project/procs"
	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/spf13/pflag"
)

// gateLambdas runs the workflow gates' lambdas in children of this very
// binary (its hidden command lambdaproc.ChildCommand), at most half the
// CPUs (and at least two) at once.
func gateLambdas() (*lambdaproc.Runner, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, fmt.Errorf("find the berth binary to run gate lambdas with: %w", err)
	}
	return lambdaproc.New([]string{exe, lambdaproc.ChildCommand}, lambdaproc.DefaultLimits, max(2, runtime.NumCPU()/2)), nil
}

func runServe(ctx context.Context, args []string) (err error) {
	ready := api.OpenReadyPipe()
	defer func() {
		if err != nil {
			ready.Report(readyError(err))
		}
	}()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configFile := fs.String("config", "", "config file (default $BERTH_CONFIG, else ~/.config/berth/config.yaml for the default home, $BERTH_HOME/config.yaml for another)")
	brokerconfig.AddFlags(fs)
	autostarted := fs.Bool("autostarted", false, "started by berth-shim: apply idle_timeout")
	tokenOnly := fs.Bool("token-only", false, "admit only the bearer token on TCP listeners, as on macOS, where the broker cannot tell a connection's account")
	pprofAddr := fs.String("pprof", "", "serve Go runtime profiles on this loopback address (debugging, berth-bench)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	cfg, cf, err := brokerconfig.Load(fs, *configFile)
	if err != nil {
		return configError(err)
	}
	cfg.ListenOptional = *autostarted
	cfg.Autostarted = *autostarted
	cfg.TokenOnly = *tokenOnly
	dir := cfg.Home
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", dir, err)
	}
	log, logFile, err := brokerLogger(cfg, !*autostarted)
	if err != nil {
		return err
	}
	defer logFile.Close()
	if cf.Notice != "" {
		log.Warn("config: " + cf.Notice)
	}
	forceOnSecondSignal(log)
	// One processor while the broker does one thing at a time, every
	// processor while it does more (procs).
	defer procs.Govern(procs.DefaultCalm)()
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	sd := newSDNotifier()
	lambdas, err := gateLambdas()
	if err != nil {
		return err
	}
	return broker.Run(ctx, cfg, broker.Options{Logger: log, ConfigFile: cf.Path, LogProblem: logFile.Problem, Lambdas: lambdas, Ready: func() {
		ready.Report(api.Ready{PID: os.Getpid()})
		if err := sd.notify("READY=1"); err != nil {
			log.Warn("tell systemd the broker is ready", "err", err)
		}
	}, Stopping: func() {
		// A service manager sees the stop begin, also for `berth stop`
		// and an idle exit.
		_ = sd.notify("STOPPING=1")
	}})
}

// forceOnSecondSignal exits at once, without the clean shutdown, when a
// second SIGINT or SIGTERM arrives (the first one is main's: it starts the
// clean stop).
func forceOnSecondSignal(log *slog.Logger) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		sig := <-ch
		log.Warn("second signal: exiting without a clean shutdown", "signal", sig.String())
		fmt.Fprintln(os.Stderr, "berth serve: second signal: exiting now (state files may remain; the next broker cleans them)")
		os.Exit(exitForced)
	}()
}

// readyError is the readiness report of a broker that could not start;
// another broker holding the home is reported by code, with its pid.
func readyError(err error) api.Ready {
	rep := api.Ready{Error: err.Error()}
	var running *broker.RunningError
	switch {
	case errors.As(err, &running):
		rep.Code, rep.HolderPID = api.CodeAlreadyRunning, running.PID
	case errors.As(err, new(badConfig)):
		rep.Code = api.CodeBadConfig
	}
	return rep
}

// badConfig marks an error in the broker's configuration: the file, a
// BERTH_ variable or a flag. The readiness report carries it with
// api.CodeBadConfig, so that a shim says what to fix instead of pointing
// at a log the broker never opened.
type badConfig struct{ error }

func (e badConfig) Unwrap() error { return e.error }

func configError(err error) error { return badConfig{err} }

// Rotation of berth.log: it is rotated when it reaches logMaxMiB, and the
// logBackups newest rotated logs are kept, gzip-compressed
// (berth-<time>.log.gz beside it), so the log never takes more than
// logMaxMiB plus the compressed backups.
const (
	logMaxMiB  = 10
	logBackups = 3
)

// brokerLogger logs to $home/berth.log at log_level, rotated by size, and,
// for a broker run by hand, to stderr. The file says when it cannot be
// written (broker/logfile).
func brokerLogger(cfg brokerconfig.Config, toStderr bool) (*slog.Logger, *logfile.Writer, error) {
	lv, err := cfg.Level()
	if err != nil {
		return nil, nil, err
	}
	file, err := logfile.Open(filepath.Join(cfg.Home, api.LogName), logfile.Options{MaxMiB: logMaxMiB, Backups: logBackups})
	if err != nil {
		return nil, nil, err
	}
	var w io.Writer = file
	if toStderr {
		w = io.MultiWriter(file, os.Stderr)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), file, nil
}
