package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
	"github.com/spf13/pflag"
)

// runIDEConfig prints, or with --write merges into the app's own file, the
// MCP server entry that launches berth-shim; `ide-config import` moves the
// app's other servers into Berth's config.
func runIDEConfig(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "import" {
		return runIDEImport(ctx, args[1:])
	}
	fset := pflag.NewFlagSet("ide-config", pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	project := fset.String("project", "", "project root (default: Cursor's global entry names the open workspace; the others need a project, found from the working directory)")
	write := fset.Bool("write", false, "merge the entry into the app's configuration file (a backup of the old file is kept beside it)")
	name := fset.String("name", "", "server name (default berth, or berth-<project> in a file shared by all projects)")
	portable := fset.Bool("portable", false, "write the project's own file with no path of this machine (berth-shim from PATH, the IDE's workspace folder), for the team to commit")
	app, plan, err := parseAppPlan(fset, args, "name one app: "+strings.Join(ideconfig.Names(), ", ")+" (or `import APP` to move its servers into Berth)", project, name, portable)
	if err != nil {
		return err
	}
	if !*write {
		snippet, err := plan.Snippet()
		if err != nil {
			return err
		}
		again := append([]string{"berth", "ide-config"}, args...)
		fmt.Fprintf(os.Stderr, "%s reads this from %s (under %q); `%s` merges it there.\n", app.Title, plan.Path, app.ServersKey, shellJoin(append(again, "--write")))
		os.Stdout.Write(snippet)
		return nil
	}
	res, backup, err := plan.Write()
	if err != nil {
		return err
	}
	switch res {
	case ideconfig.Unchanged:
		fmt.Printf("%s already has server %q as wanted: nothing to change\n", plan.Path, plan.Name)
	case ideconfig.Created:
		fmt.Printf("wrote %s with server %q; restart %s (or reload its MCP servers) to use it\n", plan.Path, plan.Name, app.Title)
	default:
		fmt.Printf("set server %q in %s, keeping the rest (the file as it was is in %s); restart %s (or reload its MCP servers) to use it\n", plan.Name, plan.Path, backup, app.Title)
	}
	return nil
}

// parseAppPlan parses the flags and the one app of ide-config or its
// import (missing is the usage error without it) and builds the app's
// entry with planFor.
func parseAppPlan(fset *pflag.FlagSet, args []string, missing string, dir, name *string, portable *bool) (ideconfig.App, ideconfig.Plan, error) {
	if err := parseFlags(fset, args); err != nil {
		return ideconfig.App{}, ideconfig.Plan{}, err
	}
	if fset.NArg() != 1 {
		return ideconfig.App{}, ideconfig.Plan{}, usageError{missing}
	}
	app, err := ideconfig.Lookup(fset.Arg(0))
	if err != nil {
		return ideconfig.App{}, ideconfig.Plan{}, usageError{err.Error()}
	}
	plan, err := planFor(app, *dir, *name, *portable)
	return app, plan, err
}

// planFor builds app's entry for the project dir ("" for the one around
// the working directory, or none for Cursor's global file).
func planFor(app ideconfig.App, dir, name string, portable bool) (ideconfig.Plan, error) {
	root := ""
	var err error
	switch {
	case dir != "":
		if root, err = api.ResolveRoot(dir); err != nil {
			return ideconfig.Plan{}, err
		}
	case app.Name != "cursor" || portable:
		wd, err := os.Getwd()
		if err != nil {
			return ideconfig.Plan{}, err
		}
		if root, err = api.FindRoot(wd); err != nil {
			return ideconfig.Plan{}, fmt.Errorf("%s needs a project: %w", app.Title, err)
		}
	}
	var shim []string
	if portable {
		if _, err := exec.LookPath(ideconfig.ShimName); err != nil {
			fmt.Fprintf(os.Stderr, "berth ide-config: note: %s is not on PATH here; the IDE finds it only on its PATH (install it, e.g. go install github.com/berth-dev/berth/cmd/berth-shim@latest)\n", ideconfig.ShimName)
		}
		if os.Getenv(api.HomeEnv) != "" {
			fmt.Fprintf(os.Stderr, "berth ide-config: note: a portable entry names no %s: shims use the default home\n", api.HomeEnv)
		}
	} else if shim, err = shimCommand(); err != nil {
		return ideconfig.Plan{}, err
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return ideconfig.Plan{}, fmt.Errorf("find your home directory: %w (set HOME)", err)
	}
	configDir, err := os.UserConfigDir()
	if err != nil {
		return ideconfig.Plan{}, fmt.Errorf("find your configuration directory: %w", err)
	}
	home := "" // passed on only when set: otherwise the shim's default is the same as ours
	if os.Getenv(api.HomeEnv) != "" && !portable {
		if home, err = api.DefaultHome(); err != nil {
			return ideconfig.Plan{}, err
		}
	}
	return ideconfig.NewPlan(app, ideconfig.Options{
		Project: root, Shim: shim, Home: home, Name: name, UserHome: userHome, ConfigDir: configDir, Portable: portable,
	})
}

// shimCommand is the absolute command that runs the shim: berth-shim beside
// this berth, else on PATH, else this berth's own `shim` command. IDEs often
// start with a small PATH, so the path is always absolute.
func shimCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the berth binary: %w", err)
	}
	temp := tempBuild(exe)
	if !temp {
		beside := filepath.Join(filepath.Dir(exe), ideconfig.ShimName)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return []string{beside}, nil
		}
	}
	if p, err := exec.LookPath(ideconfig.ShimName); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return []string{abs}, nil
		}
	}
	if temp {
		return nil, fmt.Errorf("berth runs from a temporary build (%s) and berth-shim is not on PATH: install both first (go install ./cmd/berth ./cmd/berth-shim)", exe)
	}
	return []string{exe, "shim"}, nil
}

// shellJoin writes args as a shell command line, quoting what needs it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`&|;<>()*?[]#~!{}") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
