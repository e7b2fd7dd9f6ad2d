package main

import (
	"errors"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
)

// checkIDEFiles reads the apps' MCP files doctor knows (the user's own,
// and the project files of the projects it knows) that exist, and checks
// the entries that run berth-shim: the file parses as the app reads it,
// the command exists, the home is this one; and those that name a
// project's URL: a port of a project Berth knows. For a home of its own
// (BERTH_HOME naming another folder than the default), the user's own
// files count only for the entries that name that home: they are the
// default home's.
func (d *doctor) checkIDEFiles() {
	places, err := ideconfig.UserPlaces()
	if err != nil {
		return
	}
	def, err := api.UserStateHome()
	defaultHome := err == nil && filepath.Clean(def) == filepath.Clean(d.home)
	roots := slices.Sorted(maps.Keys(d.projects))
	seen := map[string]bool{}
	for _, app := range ideconfig.Apps {
		type place struct {
			scope ideconfig.Scope
			root  string
		}
		var places_ []place
		if app.HasScope(ideconfig.ScopeUser) {
			places_ = append(places_, place{ideconfig.ScopeUser, ""})
		}
		for _, root := range roots {
			for _, s := range []ideconfig.Scope{ideconfig.ScopeProject, ideconfig.ScopeLocal} {
				if app.HasScope(s) {
					places_ = append(places_, place{s, root})
				}
			}
		}
		for _, pl := range places_ {
			path := app.File(pl.scope, pl.root, places)
			keys := app.ServersPath(pl.scope, pl.root)
			id := path + "\x00" + strings.Join(keys, "\x00")
			if seen[id] {
				continue
			}
			seen[id] = true
			where := path
			if pl.scope == ideconfig.ScopeLocal {
				where = path + " (" + strings.Join(keys, " > ") + ")"
			}
			d.checkIDEFile(app, path, where, keys, pl.scope != ideconfig.ScopeProject && !defaultHome)
		}
	}
}

// checkIDEFile checks the Berth entries of one app's file; with
// ownHomeOnly, only those that name this home.
func (d *doctor) checkIDEFile(app ideconfig.App, path, where string, keys []string, ownHomeOnly bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && ownHomeOnly) {
		return
	}
	if err != nil {
		d.warn("", "%s: %s: %v", app.Title, path, err)
		return
	}
	entries, urls, err := ideconfig.BerthEntries(app, data, keys)
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
			d.fail("`berth ide-config "+app.Name+" --write` (with the --project you used) writes the entry again", "%s: %s: server %q runs %s, which does not exist", app.Title, where, name, cmd)
			continue
		case !filepath.IsAbs(cmd):
			if _, err := exec.LookPath(cmd); err != nil {
				d.warn(app.Title+" finds it only if it is on the PATH it starts with", "%s: %s: server %q runs %s, which is not on PATH here", app.Title, where, name, cmd)
				continue
			}
		}
		if h := e.Env[api.HomeEnv]; h != "" && filepath.Clean(h) != filepath.Clean(d.home) {
			d.note("%s: %s: server %q uses the broker of %s (this check looked at %s)", app.Title, where, name, h, d.home)
			continue
		}
		d.ok("%s: %s: server %q runs berth-shim", app.Title, where, name)
	}
	if ownHomeOnly {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		u, err := url.Parse(urls[name])
		if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") || (u.Path != "/mcp" && u.Path != "/sse") {
			continue // not a project port of this machine
		}
		port, _ := strconv.Atoi(u.Port())
		if root, ok := d.ports[port]; ok {
			d.ok("%s: %s: server %q connects to %s, the port of %s", app.Title, where, name, urls[name], root)
			continue
		}
		d.warn("the entry follows a project only while it keeps its port: `berth ide-config "+app.Name+" --transport http --write` (with the --project you used) writes it again",
			"%s: %s: server %q connects to %s, which no project Berth serves or knows has now", app.Title, where, name, urls[name])
	}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
