// Package ideconfig writes the MCP server entry that makes an IDE launch
// berth-shim, in each app's own configuration format, and merges it into the
// app's file without touching the user's other servers or settings.
package ideconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
)

// WorkspaceFolder is the IDE's variable for the open workspace (Cursor
// and VS Code expand it in their mcp.json): the global Cursor entry names
// the workspace with it, and so does a --portable project file.
const WorkspaceFolder = "${workspaceFolder}"

// ShimName is the shim's program name, looked up on PATH by a portable entry.
const ShimName = "berth-shim"

// Entry is Berth's entry in neutral form: the command that runs the shim,
// or the project's URL. Merge writes it as JSON under its tags.
type Entry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"-"`
}

// Plan is the entry for one app and where it goes.
type Plan struct {
	App   App
	Scope Scope
	Path  string   // the configuration file
	Keys  []string // the path of keys to the servers in it
	Name  string   // the server's name in it
	Entry Entry
	// Transport is stdio (the app runs Entry.Command) or the URL
	// transport of Entry.URL.
	Transport string
	// BackupDir is where the file as it was is kept: "" beside it (the
	// user's own files), a folder of Berth's for a repository's file, so
	// that backups do not pile up in the project.
	BackupDir string
	value     object // the entry in the app's own form
}

// Options choose the entry.
type Options struct {
	// Project is the resolved project root, or "" (only Cursor's global entry,
	// which names the workspace folder instead).
	Project string
	Shim    []string // the shim's command and leading arguments
	Home    string   // BERTH_HOME to pass the shim; "" for its default
	Name    string   // server name; "" for berth, or berth-<project> in a user file
	Places  Places
	// Scope is the file: "" for the app's default.
	Scope Scope
	// Portable writes the project's own file with no path of this machine:
	// the shim by name (found on PATH) and the project as the IDE's
	// workspace folder (or the folder the app starts servers in), so that
	// a team can commit it.
	Portable bool
	// Transport is stdio ("" too), or http or sse: then the entry is URL,
	// the project's endpoint.
	Transport string
	URL       string
}

// NewPlan builds the entry of app for o.
func NewPlan(app App, o Options) (Plan, error) {
	scope := o.Scope
	if scope == "" {
		scope = app.DefaultScope(o.Project)
	}
	if !app.HasScope(scope) {
		return Plan{}, fmt.Errorf("%s has no %s file: use --scope %s", app.Title, scope, scopeList(app))
	}
	if o.Project == "" && (scope != ScopeUser || app.Workspace == "") {
		return Plan{}, fmt.Errorf("%s needs the project: pass --project DIR or run inside the project", app.Title)
	}
	transport := o.Transport
	if transport == "" {
		transport = TransportStdio
	}
	if transport != TransportStdio && app.remote[transport] == nil {
		return Plan{}, fmt.Errorf("%s does not connect to MCP servers over %s: use --transport %s", app.Title, transport, strings.Join(app.Transports(), " or --transport "))
	}
	if len(o.Shim) == 0 && !o.Portable && transport == TransportStdio {
		return Plan{}, errors.New("no berth-shim command")
	}
	project := o.Project
	if project == "" {
		project = app.Workspace
	}
	e := Entry{}
	switch {
	case o.Portable && transport != TransportStdio:
		return Plan{}, fmt.Errorf("--portable writes a command for the team's machines; a URL names this machine's port: leave out --transport %s", transport)
	case o.Portable && scope != ScopeProject:
		return Plan{}, fmt.Errorf("--portable writes a project's own file, and %s's %s file is yours alone: use --scope project with %s", app.Title, scope, strings.Join(portableApps(), ", "))
	case o.Portable:
		e.Command, e.Args = ShimName, []string{}
		if app.Workspace != "" {
			e.Args = []string{"--project", app.Workspace}
		}
	case transport != TransportStdio:
		if o.URL == "" {
			return Plan{}, errors.New("no URL for the project")
		}
		e.URL = o.URL
	default:
		e.Command, e.Args = o.Shim[0], append(slices.Clone(o.Shim[1:]), "--project", project)
		if o.Home != "" {
			e.Env = map[string]string{api.HomeEnv: o.Home}
		}
	}
	name := o.Name
	if name == "" {
		name = "berth"
		if o.Project != "" && scope == ScopeUser {
			name = "berth-" + filepath.Base(o.Project)
		}
	}
	p := Plan{App: app, Scope: scope, Path: app.File(scope, o.Project, o.Places), Keys: app.ServersPath(scope, o.Project),
		Name: name, Entry: e, Transport: transport}
	if transport == TransportStdio {
		p.value = app.stdio(name, e)
	} else {
		p.value = app.remote[transport](name, e.URL)
	}
	return p, nil
}

func scopeList(app App) string {
	var s []string
	for _, sc := range app.Scopes() {
		s = append(s, string(sc))
	}
	return strings.Join(s, " or --scope ")
}

// portableApps are the apps with a project file.
func portableApps() []string {
	var out []string
	for _, a := range Apps {
		if a.HasScope(ScopeProject) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Snippet is a whole file holding only this entry, for printing.
func (p Plan) Snippet() ([]byte, error) {
	d, err := parseDoc(p.App.format, nil)
	if err != nil {
		return nil, err
	}
	if err := d.set(p.Keys, p.Name, p.value); err != nil {
		return nil, err
	}
	return d.bytes(), nil
}

// Merge returns existing (JSON, with comments and trailing commas if it
// has them) with the server name set to e under serversKey. Everything
// else is kept byte for byte: other servers and keys, their order,
// comments, indentation.
func Merge(existing []byte, serversKey, name string, e Entry) ([]byte, error) {
	d, err := parseDocument(existing)
	if err != nil {
		return nil, err
	}
	entry, err := marshalNoEscape(e)
	if err != nil {
		return nil, err
	}
	if err := d.set([]string{serversKey}, name, entry); err != nil {
		return nil, err
	}
	return d.bytes(), nil
}

// apply sets the plan's entry in data, an app file's content, and checks
// that the result reads as intended.
func (p Plan) apply(data []byte) ([]byte, error) {
	d, err := parseDoc(p.App.format, data)
	if err != nil {
		return nil, err
	}
	if err := d.set(p.Keys, p.Name, p.value); err != nil {
		return nil, err
	}
	out := d.bytes()
	if err := verify(p.App.format, data, out, p.Keys, map[string]object{p.Name: p.value}); err != nil {
		return nil, err
	}
	return out, nil
}

// Result says what Write did.
type Result int

// Results of Write.
const (
	Unchanged Result = iota
	Created
	Updated
)

// Write merges the plan's entry into its file atomically, keeping a copy
// of the file as it was (Backup). A file that does not parse is refused
// and left as it is.
func (p Plan) Write() (Result, string, error) {
	return edit(p.Path, p.BackupDir, p.apply)
}

// edit rewrites path (a symlink's target) with change, atomically and
// keeping the mode; the file as it was is first copied to a backup (in
// backupDir, or beside it), whose path it returns. A missing file is
// created (no backup); a change that changes nothing writes nothing.
func edit(path, backupDir string, change func(old []byte) ([]byte, error)) (Result, string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a symlinked dotfile stays a symlink
	}
	old, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	res := Updated
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res, old = Created, nil
	case err != nil:
		return 0, "", fmt.Errorf("read %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	merged, err := change(old)
	if err != nil {
		return 0, "", fmt.Errorf("cannot change %s: %v; fix the file or move it aside and run again (nothing was changed)", path, err)
	}
	if res == Updated && bytes.Equal(old, merged) {
		return Unchanged, "", nil
	}
	backup := ""
	if res == Updated {
		if backup, err = Backup(backupDir, path, old, mode); err != nil {
			return 0, "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := api.WriteFileAtomic(path, merged, mode); err != nil {
		return 0, "", fmt.Errorf("write %s: %w", path, err)
	}
	return res, backup, nil
}

// KeepBackups is how many backups of one file Backup keeps in a folder of
// Berth's (those beside the user's own files are the user's to remove).
const KeepBackups = 5

// Backup writes data, the content of path before a change, as
// NAME.berth-backup-<UTC time> with mode: beside path when dir is "",
// else in dir (NAME is then path's name and a hash of its full path), where
// only the newest KeepBackups of path's backups are kept. It returns the
// backup's path.
func Backup(dir, path string, data []byte, mode fs.FileMode) (string, error) {
	base := path
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("back up %s: %w (nothing was changed)", path, err)
		}
		sum := sha256.Sum256([]byte(path))
		base = filepath.Join(dir, filepath.Base(path)+"-"+hex.EncodeToString(sum[:4]))
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		b := base + ".berth-backup-" + stamp
		if i > 0 {
			b += "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(b, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w (nothing was changed)", path, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(b)
			return "", fmt.Errorf("back up %s: %w (nothing was changed)", path, werr)
		}
		if dir != "" {
			pruneBackups(base)
		}
		return b, nil
	}
}

// pruneBackups removes all but the newest KeepBackups backups of base.
func pruneBackups(base string) {
	old, _ := filepath.Glob(base + ".berth-backup-*")
	if len(old) <= KeepBackups {
		return
	}
	slices.SortFunc(old, func(a, b string) int {
		ia, _ := os.Stat(a)
		ib, _ := os.Stat(b)
		if ia == nil || ib == nil {
			return strings.Compare(a, b)
		}
		return ia.ModTime().Compare(ib.ModTime())
	})
	for _, f := range old[:len(old)-KeepBackups] {
		os.Remove(f)
	}
}

// marshalNoEscape is json.Marshal without escaping <, > and & (paths and
// names stay readable).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
