package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/service"
	"github.com/spf13/pflag"
)

// runService installs, removes or reports the user service that runs the
// broker (a systemd user unit on Linux, a launchd agent on macOS).
func runService(ctx context.Context, args []string) error {
	fset := pflag.NewFlagSet("service", pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	kind := fset.String("kind", service.DefaultKind, "systemd or launchd (default: this OS's)")
	if helpRequested(args) {
		return showHelp("service", fset)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError{"name an action: install, uninstall or status"}
	}
	action := args[0]
	if err := parseFlags(fset, args[1:]); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fset.Arg(0))}
	}
	if *kind == "" {
		return errors.New("this OS has no supported service manager (systemd or launchd): run `berth serve` under your own supervisor")
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find your home directory: %w (set HOME)", err)
	}
	t, err := service.TargetFor(*kind, userHome, os.Getuid())
	if err != nil {
		return usageError{err.Error()}
	}
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	switch action {
	case "install":
		return serviceInstall(t, home)
	case "uninstall":
		return serviceUninstall(t)
	case "status":
		return serviceStatus(ctx, t, home)
	}
	return usageError{fmt.Sprintf("unknown action %q: use install, uninstall or status", action)}
}

// serviceSpec is the unit for the running berth binary and home.
func serviceSpec(home string) (service.Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Spec{}, fmt.Errorf("find the berth binary: %w", err)
	}
	if tempBuild(exe) {
		return service.Spec{}, fmt.Errorf("berth runs from a temporary build (%s): install it first (go install ./cmd/berth ./cmd/berth-shim) and run that berth", exe)
	}
	return service.Spec{Berth: exe, Home: home}, nil
}

// tempBuild reports a binary `go run` built in a temporary folder: a unit or
// IDE entry naming it would break when the folder is removed.
func tempBuild(exe string) bool {
	return strings.Contains(exe, string(filepath.Separator)+"go-build")
}

func serviceInstall(t service.Target, home string) error {
	spec, err := serviceSpec(home)
	if err != nil {
		return err
	}
	if err := t.Check(spec); err != nil {
		return err
	}
	want := t.Render(spec)
	if real, err := filepath.EvalSymlinks(t.Path); err == nil {
		t.Path = real // a unit linked from a dotfiles folder stays a link
	}
	old, err := os.ReadFile(t.Path)
	switch {
	case err == nil && bytes.Equal(old, want):
		fmt.Printf("%s is already installed and up to date\n", t.Path)
	case err == nil:
		if err := os.WriteFile(t.Path+".bak", old, 0o644); err != nil {
			return fmt.Errorf("back up %s: %w", t.Path, err)
		}
		if err := api.WriteFileAtomic(t.Path, want, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", t.Path, err)
		}
		fmt.Printf("updated %s (the previous one is %s.bak)\n", t.Path, t.Path)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(t.Path), err)
		}
		if err := api.WriteFileAtomic(t.Path, want, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", t.Path, err)
		}
		fmt.Printf("wrote %s\n", t.Path)
	default:
		return fmt.Errorf("read %s: %w", t.Path, err)
	}
	// launchd opens the crash log in the home before the broker runs.
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", home, err)
	}
	fmt.Printf("It runs %s serve with BERTH_HOME=%s.\nStart it now and at every login with:\n", spec.Berth, home)
	for _, c := range t.Enable {
		fmt.Println("  " + c)
	}
	if h, err := brokerHealth(context.Background(), home); err == nil && h.Autostarted {
		fmt.Printf("A broker a shim started runs now (pid %d): the service takes over when it exits after its idle timeout; `berth stop` hands over at once (IDE shims reconnect).\n", h.PID)
	}
	return nil
}

// managerState asks the service manager about the unit, briefly; it is
// information only, so any failure is reported as text.
func managerState(ctx context.Context, t service.Target) string {
	bin, err := exec.LookPath(t.Query[0])
	if err != nil {
		return t.Query[0] + " is not installed"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bin, t.Query[1:]...).CombinedOutput() // is-active exits non-zero when inactive
	state := t.ManagerState(string(out))
	if state == "" {
		state = "no answer"
	}
	return strings.Join(t.Query, " ") + ": " + state
}

// brokerHealth asks the broker of home for its health, briefly.
func brokerHealth(ctx context.Context, home string) (api.Health, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return api.NewUnixClient(api.SocketPath(home)).Health(ctx)
}

func serviceUninstall(t service.Target) error {
	if _, err := os.Stat(t.Path); errors.Is(err, fs.ErrNotExist) {
		fmt.Printf("not installed: there is no %s\n", t.Path)
		return nil
	}
	fmt.Println("Stop the running service first (the broker unmounts every project and removes its state files):")
	for _, c := range t.Disable {
		fmt.Println("  " + c)
	}
	if err := os.Remove(t.Path); err != nil {
		return fmt.Errorf("remove %s: %w", t.Path, err)
	}
	fmt.Printf("removed %s\n", t.Path)
	return nil
}

func serviceStatus(ctx context.Context, t service.Target, home string) error {
	data, err := os.ReadFile(t.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Printf("unit:    not installed (no %s): berth service install\n", t.Path)
	case err != nil:
		return fmt.Errorf("read %s: %w", t.Path, err)
	default:
		note := "up to date"
		if spec, err := serviceSpec(home); err == nil && !bytes.Equal(data, t.Render(spec)) {
			note = "differs from what this berth would write (another binary or home): run berth service install again"
		}
		fmt.Printf("unit:    installed at %s (%s)\n", t.Path, note)
	}
	fmt.Printf("manager: %s\n", managerState(ctx, t))
	fmt.Printf("home:    %s\n", home)
	h, err := brokerHealth(ctx, home)
	if err != nil {
		fmt.Printf("broker:  none answers on %s\n", api.SocketPath(home))
		return nil
	}
	how := "not started by a shim: the service, or a berth serve run by hand"
	if h.Autostarted {
		how = "started by a shim: exits after " + h.IdleTimeout + " with no projects"
	}
	fmt.Printf("broker:  answering on %s: pid %d, version %s, up %s, %d projects (%s)\n",
		api.SocketPath(home), h.PID, h.Version, time.Duration(h.UptimeSeconds*float64(time.Second)).Round(time.Second), h.Projects, how)
	return nil
}
