package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/pflag"
)

// runIDEImport: berth ide-config import APP [--project DIR] [--scope S]
// moves the MCP servers APP launches into Berth's config and leaves APP
// with the one entry that runs berth-shim. It looks where the app looks:
// the servers of the project's file go to the project's config (and run
// once approved); those of the app's user file go to the broker's config
// only with --scope user. A project's file is left with a portable entry:
// it is the repository's, and gets no path of this machine. Every file it
// changes is backed up first.
func runIDEImport(ctx context.Context, args []string) error {
	fset := pflag.NewFlagSet("ide-config import", pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	var o planFlags
	o.add(fset, "the project whose file (and config) to import from and into (default: the project around the working directory)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageError{"name one app to import from: " + strings.Join(ideconfig.Names(), ", ")}
	}
	app, err := ideconfig.Lookup(fset.Arg(0))
	if err != nil {
		return usageError{err.Error()}
	}
	scope := ideconfig.Scope(o.scope)
	switch {
	case scope == "" && app.HasScope(ideconfig.ScopeProject):
		scope = ideconfig.ScopeProject
	case scope == "":
		places, err := ideconfig.UserPlaces()
		if err != nil {
			return err
		}
		return usageError{fmt.Sprintf("%s keeps its servers in your own file (%s), which every project shares: `berth ide-config import %s --scope user` moves them into the broker's config, served to every project", app.Title, app.File(ideconfig.ScopeUser, "", places), app.Name)}
	case scope != ideconfig.ScopeProject && scope != ideconfig.ScopeUser:
		return usageError{fmt.Sprintf("--scope %s: import reads a project's file (project) or yours (user)", scope)}
	}
	o.scope, o.transport = string(scope), ""
	o.portable = o.portable || scope == ideconfig.ScopeProject // the repository's file gets no path of this machine
	app, plan, err := parseAppPlan(ctx, fset, args, "", &o)
	if err != nil {
		return err
	}
	root := ""
	if scope == ideconfig.ScopeProject {
		if root, err = projectOf(o.project); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(plan.Path)
	if errors.Is(err, fs.ErrNotExist) {
		data = nil
	} else if err != nil {
		return err
	}
	found, err := ideconfig.ReadImports(app, data, plan.Keys, root)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v; fix the file and run again (nothing was changed)", plan.Path, err)
	}
	elsewhere := userServersNote(app, scope, root)
	if len(found.Imports) == 0 && len(data) == 0 {
		fmt.Printf("%s has no file at %s: nothing to import\n", app.Title, plan.Path)
		if elsewhere != "" {
			fmt.Println(elsewhere)
		}
		return nil
	}
	target, err := importTarget(root)
	if err != nil {
		return err
	}
	imports, skips, err := target.add(found.Imports, app, plan.Path)
	if err != nil {
		return err
	}
	found.Skips = append(found.Skips, skips...)

	// Berth's config first: if the app's file cannot be written after it,
	// the servers are in both places, never in none.
	var backups []string
	if len(imports) > 0 {
		dir := ""
		if root != "" {
			if dir, err = backupDir(root); err != nil {
				return err
			}
		}
		_, backup, err := ideconfig.Edit(target.path, dir, target.change)
		if err != nil {
			return err
		}
		backups = append(backups, backup)
	}
	_, backup, err := ideconfig.Edit(plan.Path, plan.BackupDir, func(old []byte) ([]byte, error) {
		return ideconfig.LeaveOnlyBerth(old, plan, imports)
	})
	if err != nil {
		return fmt.Errorf("%w (the servers were added to %s: remove them from the app's file by hand)", err, target.path)
	}
	backups = append(backups, backup)
	printImport(os.Stdout, app, plan, target, imports, found, backups, root)
	if elsewhere != "" {
		fmt.Println(elsewhere)
	}
	return nil
}

// projectOf resolves --project DIR, else the project around the working directory.
func projectOf(dir string) (string, error) {
	if dir != "" {
		return api.ProjectRootOf(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return api.FindRoot(wd)
}

// userServersNote says which servers the app's user file also holds
// when a project's file was imported: they stay, and the command that
// moves them is named ("" when there are none).
func userServersNote(app ideconfig.App, scope ideconfig.Scope, root string) string {
	if scope != ideconfig.ScopeProject || !app.HasScope(ideconfig.ScopeUser) {
		return ""
	}
	places, err := ideconfig.UserPlaces()
	if err != nil {
		return ""
	}
	file := app.File(ideconfig.ScopeUser, "", places)
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	found, err := ideconfig.ReadImports(app, data, app.ServersPath(ideconfig.ScopeUser, ""), root)
	if err != nil || len(found.Imports) == 0 {
		return ""
	}
	var names []string
	for _, im := range found.Imports {
		names = append(names, im.From)
	}
	return fmt.Sprintf("%s also starts %d server(s) from your own file %s (%s), in every project: they stay there; `berth ide-config import %s --scope user` moves them into the broker's config",
		app.Title, len(names), file, strings.Join(names, ", "), app.Name)
}

// importDest is the Berth config file servers are imported into.
type importDest struct {
	path    string
	project string // the project root, or "" for the broker's config
	schema  *config.Schema
	change  func(old []byte) ([]byte, error) // set by add
}

// importTarget is the project's config file (config.yaml, else an
// existing config.yml or config.json, else a new config.yaml), or the
// broker's config file (the one it reads, else where it looks first).
func importTarget(root string) (*importDest, error) {
	if root == "" {
		home, err := api.DefaultHome()
		if err != nil {
			return nil, err
		}
		cf, err := brokerconfig.FindConfig("", home)
		if err != nil {
			return nil, err
		}
		return &importDest{path: cf.Want, schema: brokerconfig.Schema()}, nil
	}
	dir := filepath.Join(root, config.Dir)
	path := filepath.Join(dir, "config.yaml")
	for _, n := range []string{"config.yaml", "config.yml", "config.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			path = filepath.Join(dir, n)
			break
		}
	}
	return &importDest{path: path, project: root, schema: config.ProjectSchema()}, nil
}

// add prepares the change that adds imports to the target file, leaving
// out servers it already declares the same way; a name it declares
// otherwise is skipped with the fix.
func (t *importDest) add(imports []ideconfig.Import, app ideconfig.App, from string) ([]ideconfig.Import, []ideconfig.Skip, error) {
	data, err := os.ReadFile(t.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	existing := map[string]config.Server{}
	if len(data) > 0 {
		doc, err := config.ParseFile(t.path, data)
		if err != nil {
			return nil, nil, fmt.Errorf("%v (fix it before importing; nothing was changed)", err)
		}
		if existing, err = config.ServersIn(t.path, doc); err != nil {
			return nil, nil, fmt.Errorf("%v (fix it before importing; nothing was changed)", err)
		}
	}
	var keep []ideconfig.Import
	var skips []ideconfig.Skip
	for _, im := range imports {
		if old, ok := existing[im.Name]; ok {
			if old.Digest() != im.Server.Digest() {
				skips = append(skips, ideconfig.Skip{Name: im.From, Why: fmt.Sprintf("%s already declares a server %q that runs something else: rename one and import again", t.path, im.Name)})
				continue
			}
		}
		keep = append(keep, im)
	}
	var add []config.NamedServer
	for _, im := range keep {
		if _, ok := existing[im.Name]; !ok {
			ns := config.NamedServer{Name: im.Name, Server: im.Server}
			if len(add) == 0 {
				ns.Comment = fmt.Sprintf("imported from %s (%s)", app.Title, displayPath(from, t.project))
			}
			add = append(add, ns)
		}
	}
	t.change = func(old []byte) ([]byte, error) {
		if strings.EqualFold(filepath.Ext(t.path), ".json") {
			var js []ideconfig.Import
			for _, im := range keep {
				if _, ok := existing[im.Name]; !ok {
					js = append(js, im)
				}
			}
			return ideconfig.SetJSONServers(old, js)
		}
		return config.AddServers(t.path, old, add, t.schema)
	}
	return keep, skips, nil
}

// printImport says what moved where, what stayed, the backups and what to do next.
func printImport(w io.Writer, app ideconfig.App, plan ideconfig.Plan, t *importDest, imports []ideconfig.Import, found ideconfig.Found, backups []string, root string) {
	if len(imports) == 0 {
		fmt.Fprintf(w, "nothing to import from %s\n", plan.Path)
	} else {
		fmt.Fprintf(w, "imported %d server(s) from %s into %s:\n", len(imports), plan.Path, t.path)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, im := range imports {
			what := im.Server.URL
			if what == "" {
				what = strings.Join(append([]string{im.Server.Command}, im.Server.Args...), " ")
			}
			renamed := ""
			if im.Name != im.From {
				renamed = fmt.Sprintf("(was %q)", im.From)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", im.Name, renamed, what)
		}
		tw.Flush()
	}
	if len(found.Skips) > 0 {
		fmt.Fprintf(w, "left in %s's file:\n", app.Title)
		for _, s := range found.Skips {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, s.Why)
		}
	}
	fmt.Fprintf(w, "%s now launches Berth (server %q: %s)\n", app.Title, plan.Name, strings.Join(append([]string{plan.Entry.Command}, plan.Entry.Args...), " "))
	for _, b := range backups {
		if b != "" {
			fmt.Fprintf(w, "backup: %s\n", b)
		}
	}
	switch {
	case len(imports) > 0 && root != "":
		fmt.Fprintf(w, "next: servers a project declares run only once you approve them:\n  berth servers approve %s\nthen restart %s (or reload its MCP servers)\n", shellJoin([]string{root}), app.Title)
	case len(imports) > 0:
		fmt.Fprintf(w, "next: restart the broker to load them (`berth stop`; the next window starts it again), then restart %s\n", app.Title)
	default:
		fmt.Fprintf(w, "next: restart %s (or reload its MCP servers)\n", app.Title)
	}
}

// displayPath is path as a config file that others may read should show
// it: relative to the project when inside it, ~/... under the home.
func displayPath(path, root string) string {
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if rel, err := filepath.Rel(home, path); err == nil && filepath.IsLocal(rel) {
			return "~/" + rel
		}
	}
	return path
}
