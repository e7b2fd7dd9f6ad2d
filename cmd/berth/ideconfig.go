package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
	"github.com/spf13/pflag"
)

// runIDEConfig prints, or with --write merges into the app's own file, the
// MCP server entry that launches berth-shim (or, with --transport http,
// names the project's URL); `ide-config import` moves the app's other
// servers into Berth's config.
func runIDEConfig(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "import" {
		return runIDEImport(ctx, args[1:])
	}
	fset := pflag.NewFlagSet("ide-config", pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	var o planFlags
	o.add(fset, "project root (default: the project around the working directory; Cursor's user entry without it names the open workspace)")
	write := fset.Bool("write", false, "merge the entry into the app's configuration file (a backup of the old file is kept)")
	fset.StringVar(&o.transport, "transport", ideconfig.TransportStdio, "stdio (the app runs berth-shim), or http or sse: the app connects to the project's port")
	app, plan, err := parseAppPlan(ctx, fset, args, "name one app: "+strings.Join(ideconfig.Names(), ", ")+" (or `import APP` to move its servers into Berth)", &o)
	if err != nil {
		return err
	}
	if !*write {
		snippet, err := plan.Snippet()
		if err != nil {
			return err
		}
		again := append([]string{"berth", "ide-config"}, args...)
		fmt.Fprintf(os.Stderr, "%s reads this from %s (under %q); `%s` merges it there.\n", app.Title, plan.Path, strings.Join(plan.Keys, "."), shellJoin(append(again, "--write")))
		for _, h := range planHints(plan) {
			fmt.Fprintln(os.Stderr, "note: "+h)
		}
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
	for _, h := range planHints(plan) {
		fmt.Println("note: " + h)
	}
	return nil
}

// planHints are what the user must know about an entry: what the app
// asks before it runs it, and how long a URL entry stays right.
func planHints(p ideconfig.Plan) []string {
	var out []string
	if t := p.App.Trust(p.Scope); t != "" {
		out = append(out, t)
	}
	if p.Transport != ideconfig.TransportStdio {
		out = append(out, fmt.Sprintf("%s is the port the broker keeps for this project: the entry follows the project only while that reservation holds (another program on the port moves the project to another; then run this command again). `berth attach DIR` keeps the project served with no window open", p.Entry.URL))
	}
	return out
}

// planFlags are the flags ide-config and its import share.
type planFlags struct {
	project, name, scope, transport string
	portable                        bool
}

func (o *planFlags) add(fset *pflag.FlagSet, projectDoc string) {
	fset.StringVar(&o.project, "project", "", projectDoc)
	fset.StringVar(&o.name, "name", "", "server name (default berth, or berth-<project> in a file shared by all projects)")
	fset.BoolVar(&o.portable, "portable", false, "write the project's own file with no path of this machine (berth-shim from PATH, the IDE's workspace folder), for the team to commit")
	fset.StringVar(&o.scope, "scope", "", "which of the app's files: project (the repository's), user (yours, every project) or local (yours, this project: Claude Code); default: the app's usual one")
}

// parseAppPlan parses the flags and the one app of ide-config or its
// import (missing is the usage error without it) and builds the app's
// entry with planFor.
func parseAppPlan(ctx context.Context, fset *pflag.FlagSet, args []string, missing string, o *planFlags) (ideconfig.App, ideconfig.Plan, error) {
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
	switch ideconfig.Scope(o.scope) {
	case "", ideconfig.ScopeProject, ideconfig.ScopeUser, ideconfig.ScopeLocal:
	default:
		return app, ideconfig.Plan{}, usageError{fmt.Sprintf("--scope %q: use project, user or local", o.scope)}
	}
	if o.transport != "" && !slices.Contains([]string{ideconfig.TransportStdio, ideconfig.TransportHTTP, ideconfig.TransportSSE}, o.transport) {
		return app, ideconfig.Plan{}, usageError{fmt.Sprintf("--transport %q: use stdio, http or sse", o.transport)}
	}
	plan, err := planFor(ctx, app, *o)
	return app, plan, err
}

// planFor builds app's entry for the project o.project ("" for the one
// around the working directory, or none for Cursor's user file).
func planFor(ctx context.Context, app ideconfig.App, o planFlags) (ideconfig.Plan, error) {
	root := ""
	var err error
	scope := ideconfig.Scope(o.scope)
	workspaceEntry := app.Workspace != "" && app.HasScope(ideconfig.ScopeUser) && (scope == "" || scope == ideconfig.ScopeUser) && !o.portable
	switch {
	case o.project != "":
		if root, err = api.ProjectRootOf(o.project); err != nil {
			return ideconfig.Plan{}, err
		}
	case !workspaceEntry:
		wd, err := os.Getwd()
		if err != nil {
			return ideconfig.Plan{}, err
		}
		if root, err = api.FindRoot(wd); err != nil {
			return ideconfig.Plan{}, fmt.Errorf("%s needs a project: %w", app.Title, err)
		}
	}
	var shim []string
	switch {
	case o.transport == ideconfig.TransportHTTP || o.transport == ideconfig.TransportSSE:
	case o.portable:
		if _, err := exec.LookPath(ideconfig.ShimName); err != nil {
			fmt.Fprintf(os.Stderr, "berth ide-config: note: %s is not on PATH here; the IDE finds it only on its PATH (install it, e.g. go install github.com/berth-dev/berth/cmd/berth-shim@latest)\n", ideconfig.ShimName)
		}
		if os.Getenv(api.HomeEnv) != "" {
			fmt.Fprintf(os.Stderr, "berth ide-config: note: a portable entry names no %s: shims use the default home\n", api.HomeEnv)
		}
	default:
		if shim, err = shimCommand(); err != nil {
			return ideconfig.Plan{}, err
		}
	}
	places, err := ideconfig.UserPlaces()
	if err != nil {
		return ideconfig.Plan{}, err
	}
	home := "" // passed on only when set: otherwise the shim's default is the same as ours
	if os.Getenv(api.HomeEnv) != "" && !o.portable {
		if home, err = api.DefaultHome(); err != nil {
			return ideconfig.Plan{}, err
		}
	}
	url := ""
	if (o.transport == ideconfig.TransportHTTP || o.transport == ideconfig.TransportSSE) && root != "" && !o.portable {
		if url, err = projectURL(ctx, root, o.transport); err != nil {
			return ideconfig.Plan{}, err
		}
	}
	plan, err := ideconfig.NewPlan(app, ideconfig.Options{
		Project: root, Shim: shim, Home: home, Name: o.name, Places: places, Portable: o.portable,
		Scope: scope, Transport: o.transport, URL: url,
	})
	if err == nil && plan.Scope == ideconfig.ScopeProject {
		plan.BackupDir, err = backupDir(root)
	}
	return plan, err
}

// backupDir is where the backups of a project's files go: under Berth's
// home, so that they do not pile up in the repository.
func backupDir(root string) (string, error) {
	home, err := api.DefaultHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "backups", api.ProjectID(root)), nil
}

// projectURL is the project's endpoint for transport (http: /mcp, sse:
// /sse) on the port the broker keeps for it: the project is attached
// (the broker started if needed) to learn it, and released.
func projectURL(ctx context.Context, root, transport string) (string, error) {
	c, err := connect(ctx, true)
	if err != nil {
		return "", err
	}
	att, err := c.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid(), Version: api.Version, Transport: api.TransportHTTP})
	if err != nil {
		return "", err
	}
	defer c.Detach(context.WithoutCancel(ctx), att.ID, att.Lease)
	if att.Port == 0 {
		return "", fmt.Errorf("the broker has no port for %s now (%s): free one in its range (ports.start..ports.end) and run again, or use --transport stdio", root, strings.Join(att.Missing, "; "))
	}
	path := "/mcp"
	if transport == ideconfig.TransportSSE {
		path = "/sse"
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", att.Port, path), nil
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
