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
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

func runServe(ctx context.Context, args []string) (err error) {
	ready := api.OpenReadyPipe()
	defer func() {
		if err != nil {
			ready.Report(readyError(err))
		}
	}()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configFile := fs.String("config", "", "config file (default $BERTH_HOME/config.yaml)")
	home := fs.String("home", "", "broker home (default $BERTH_HOME, else the user state dir)")
	fs.String("listen", broker.DefaultListen, "control API TCP address; empty disables")
	fs.Int("ports-start", broker.DefaultPortStart, "first port for project endpoints (ports.start)")
	fs.Int("ports-end", broker.DefaultPortEnd, "last port for project endpoints (ports.end)")
	fs.Duration("mount-grace", broker.DefaultMountGrace, "how long a project stays mounted after its last user leaves")
	fs.Duration("idle-timeout", 10*time.Minute, "auto-started brokers exit after this long with no projects")
	fs.Duration("session-timeout", broker.DefaultSessionTimeout, "MCP sessions idle this long are closed (streamable HTTP, SSE and WebSocket); 0 = never")
	fs.String("auth", "none", "none, or token: project endpoints require the bearer token in $BERTH_HOME/token")
	fs.String("log-level", "info", "debug, info, warn or error")
	autostarted := fs.Bool("autostarted", false, "started by berth-shim: apply idle_timeout")
	pprofAddr := fs.String("pprof", "", "serve Go runtime profiles on this loopback address (debugging, berth-bench)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}

	v := configViper()
	for key, flag := range map[string]string{
		"listen": "listen", "ports.start": "ports-start", "ports.end": "ports-end", "mount_grace": "mount-grace",
		"idle_timeout": "idle-timeout", "session_timeout": "session-timeout", "auth": "auth", "log_level": "log-level",
	} {
		if err := v.BindPFlag(key, fs.Lookup(flag)); err != nil {
			return err
		}
	}
	dir := *home
	if dir == "" {
		if dir, err = api.DefaultHome(); err != nil {
			return err
		}
	}
	cfgPath := *configFile
	if cfgPath == "" {
		cfgPath = filepath.Join(dir, api.ConfigName)
		if _, statErr := os.Stat(cfgPath); statErr != nil {
			cfgPath = ""
		}
	}
	if cfgPath != "" {
		v.SetConfigFile(cfgPath)
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("config %s: %w (fix it or pass --config)", cfgPath, err)
		}
		if h := v.GetString("home"); h != "" && *home == "" && os.Getenv(api.HomeEnv) == "" {
			dir = h
		}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	cfg, err := broker.ConfigFrom(v, dir)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if !*autostarted {
		cfg.IdleTimeout = 0
	}
	cfg.ListenOptional = *autostarted
	cfg.Autostarted = *autostarted
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", dir, err)
	}
	log, closeLog, err := brokerLogger(dir, v.GetString("log_level"), !*autostarted)
	if err != nil {
		return err
	}
	defer closeLog()
	forceOnSecondSignal(log)
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	sd := newSDNotifier()
	return broker.Run(ctx, cfg, broker.Options{Logger: log, Ready: func() {
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

// configViper holds the broker's defaults and the BERTH_* environment.
func configViper() *viper.Viper {
	v := viper.New()
	broker.SetDefaults(v)
	v.SetDefault("idle_timeout", 10*time.Minute)
	v.SetDefault("log_level", "info")
	v.SetEnvPrefix("BERTH")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AllowEmptyEnv(true)
	v.AutomaticEnv()
	return v
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
	if errors.As(err, &running) {
		rep.Code, rep.HolderPID = api.CodeAlreadyRunning, running.PID
	}
	return rep
}

// brokerLogger logs to $home/berth.log and, for a broker run by hand, stderr.
func brokerLogger(home, level string, toStderr bool) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, nil, fmt.Errorf("log_level %q: use debug, info, warn or error", level)
	}
	f, err := os.OpenFile(filepath.Join(home, api.LogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open log: %w", err)
	}
	var w io.Writer = f
	if toStderr {
		w = io.MultiWriter(f, os.Stderr)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), func() { f.Close() }, nil
}

func versionString() string { return api.Version }
