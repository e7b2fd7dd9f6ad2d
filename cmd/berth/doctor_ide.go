package main

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
)

// checkIDEFiles reads the apps' MCP files doctor knows (the user's own,
// and the project files of the projects it knows) and checks the entries
// that run berth-shim: the file parses as the app reads it, the command
// exists, the home is this one. For a home of its own (BERTH_HOME naming
// another folder than the default), the user's own files count only for
// the entries that name that home: they are the default home's.
func (d *doctor) checkIDEFiles() {
	userHome, err := os.UserHomeDir()
	if err != nil {
		return
	}
	def, err := api.UserStateHome()
	defaultHome := err == nil && filepath.Clean(def) == filepath.Clean(d.home)
	configDir, _ := os.UserConfigDir()
	seen := map[string]bool{}
	for _, app := range ideconfig.Apps {
		var roots []string
		if app.Global("") || app.Name == "cursor" {
			roots = append(roots, "")
		}
		if !app.Global("/p") {
			roots = append(roots, slices.Sorted(maps.Keys(d.projects))...)
		}
		for _, root := range roots {
			if app.Name == "vscode" && root == "" {
				continue
			}
			path := app.File(root, userHome, configDir)
			if seen[path] {
				continue
			}
			seen[path] = true
			d.checkIDEFile(app, path, root == "" && !defaultHome)
		}
	}
}

// checkIDEFile checks the Berth entries of one app's file; with
// ownHomeOnly, only those that name this home.
func (d *doctor) checkIDEFile(app ideconfig.App, path string, ownHomeOnly bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && ownHomeOnly) {
		return
	}
	if err != nil {
		d.warn("", "%s: %s: %v", app.Title, path, err)
		return
	}
	entries, err := ideconfig.BerthEntries(app, data)
	if err != nil {
		if !ownHomeOnly {
			d.fail("fix the file (see the position it names); "+app.Title+" cannot start its MCP servers until then", "%s: %s: %v", app.Title, path, err)
		}
		return
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e := entries[name]
		if h := e.Env[api.HomeEnv]; ownHomeOnly && (h == "" || filepath.Clean(h) != filepath.Clean(d.home)) {
			continue
		}
		cmd := e.Command
		switch {
		case filepath.IsAbs(cmd) && !isExecutable(cmd):
			d.fail("`berth ide-config "+app.Name+" --write` (with the --project you used) writes the entry again", "%s: %s: server %q runs %s, which does not exist", app.Title, path, name, cmd)
			continue
		case !filepath.IsAbs(cmd):
			if _, err := exec.LookPath(cmd); err != nil {
				d.warn(app.Title+" finds it only if it is on the PATH it starts with", "%s: %s: server %q runs %s, which is not on PATH here", app.Title, path, name, cmd)
				continue
			}
		}
		if h := e.Env[api.HomeEnv]; h != "" && filepath.Clean(h) != filepath.Clean(d.home) {
			d.note("%s: %s: server %q uses the broker of %s (this check looked at %s)", app.Title, path, name, h, d.home)
			continue
		}
		d.ok("%s: %s: server %q runs berth-shim", app.Title, path, name)
	}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
