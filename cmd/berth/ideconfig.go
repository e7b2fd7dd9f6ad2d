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
// MCP server entry that launches berth-shim.
func runIDEConfig(_ context.Context, args []string) error {
	fset := pflag.NewFlagSet("ide-config", pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	project := fset.String("project", "", "project root (default: Cursor's global entry names the open workspace; the others need a project, found from the working directory)")
	write := fset.Bool("write", false, "merge the entry into the app's configuration file")
	name := fset.String("name", "", "server name (default berth, or berth-<project> in a file shared by all projects)")
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fset.NArg() != 1 {
		return usageError{"name one app: " + strings.Join(ideconfig.Names(), ", ")}
	}
	app, err := ideconfig.Lookup(fset.Arg(0))
	if err != nil {
		return usageError{err.Error()}
	}
	root := ""
	switch {
	case *project != "":
		if root, err = api.ResolveRoot(*project); err != nil {
			return err
		}
	case app.Name != "cursor":
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if root, err = api.FindRoot(wd); err != nil {
			return fmt.Errorf("%s needs a project: %w", app.Title, err)
		}
	}
	shim, err := shimCommand()
	if err != nil {
		return err
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find your home directory: %w (set HOME)", err)
	}
	configDir, err := os.UserConfigDir()
	if err != nil {
		return fmt.Errorf("find your configuration directory: %w", err)
	}
	home := "" // passed on only when set: otherwise the shim's default is the same as ours
	if os.Getenv(api.HomeEnv) != "" {
		if home, err = api.DefaultHome(); err != nil {
			return err
		}
	}
	plan, err := ideconfig.NewPlan(app, ideconfig.Options{
		Project: root, Shim: shim, Home: home, Name: *name, UserHome: userHome, ConfigDir: configDir,
	})
	if err != nil {
		return err
	}
	if !*write {
		snippet, err := plan.Snippet()
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s reads this from %s (under %q); `berth ide-config %s --write` merges it there.\n", app.Title, plan.Path, app.ServersKey, app.Name)
		os.Stdout.Write(snippet)
		return nil
	}
	res, err := plan.Write()
	if err != nil {
		return err
	}
	switch res {
	case ideconfig.Unchanged:
		fmt.Printf("%s already has server %q as wanted: nothing to change\n", plan.Path, plan.Name)
	case ideconfig.Created:
		fmt.Printf("wrote %s with server %q; restart %s (or reload its MCP servers) to use it\n", plan.Path, plan.Name, app.Title)
	default:
		fmt.Printf("set server %q in %s, keeping the rest; restart %s (or reload its MCP servers) to use it\n", plan.Name, plan.Path, app.Title)
	}
	return nil
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
		beside := filepath.Join(filepath.Dir(exe), "berth-shim")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return []string{beside}, nil
		}
	}
	if p, err := exec.LookPath("berth-shim"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return []string{abs}, nil
		}
	}
	if temp {
		return nil, fmt.Errorf("berth runs from a temporary build (%s) and berth-shim is not on PATH: install both first (go install ./cmd/berth ./cmd/berth-shim)", exe)
	}
	return []string{exe, "shim"}, nil
}
