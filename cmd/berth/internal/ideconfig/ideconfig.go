// Package ideconfig writes the MCP server entry that makes an IDE launch
// berth-shim, in each app's own configuration format, and merges it into the
// app's file without touching the user's other servers or settings.
package ideconfig

import (
	"bytes"
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

// App is one IDE's MCP configuration format.
type App struct {
	Name       string
	Title      string
	ServersKey string // the top-level key holding the servers
	TypeStdio  bool   // entries carry "type": "stdio"
	// Global reports whether the file is the user's (shared by all projects)
	// rather than the project's own.
	Global func(project string) bool
	// File is the configuration file; userHome and configDir are the user's
	// home and os.UserConfigDir.
	File func(project, userHome, configDir string) string
}

// Apps are the supported IDEs, by name.
var Apps = []App{
	{
		Name: "cursor", Title: "Cursor", ServersKey: "mcpServers",
		// ~/.cursor/mcp.json for every workspace, <project>/.cursor/mcp.json for one.
		Global: func(project string) bool { return project == "" },
		File: func(project, userHome, _ string) string {
			if project == "" {
				return filepath.Join(userHome, ".cursor", "mcp.json")
			}
			return filepath.Join(project, ".cursor", "mcp.json")
		},
	},
	{
		Name: "claude", Title: "Claude Desktop", ServersKey: "mcpServers",
		// ~/Library/Application Support/Claude on macOS, %APPDATA%\Claude on
		// Windows, ~/.config/Claude on Linux: os.UserConfigDir in each case.
		Global: func(string) bool { return true },
		File: func(_, _, configDir string) string {
			return filepath.Join(configDir, "Claude", "claude_desktop_config.json")
		},
	},
	{
		Name: "vscode", Title: "VS Code", ServersKey: "servers", TypeStdio: true,
		Global: func(string) bool { return false },
		File: func(project, _, _ string) string {
			return filepath.Join(project, ".vscode", "mcp.json")
		},
	},
	{
		Name: "windsurf", Title: "Windsurf", ServersKey: "mcpServers",
		Global: func(string) bool { return true },
		File: func(_, userHome, _ string) string {
			return filepath.Join(userHome, ".codeium", "windsurf", "mcp_config.json")
		},
	},
}

// Names lists the supported app names.
func Names() []string {
	var n []string
	for _, a := range Apps {
		n = append(n, a.Name)
	}
	return n
}

// Lookup returns the app called name.
func Lookup(name string) (App, error) {
	for _, a := range Apps {
		if a.Name == name {
			return a, nil
		}
	}
	return App{}, fmt.Errorf("unknown app %q: use %s", name, strings.Join(Names(), ", "))
}

// WorkspaceFolder is the IDE's variable for the open workspace (Cursor
// and VS Code expand it in their mcp.json): the global Cursor entry names
// the workspace with it, and so does a --portable project file.
const WorkspaceFolder = "${workspaceFolder}"

// ShimName is the shim's program name, looked up on PATH by a portable entry.
const ShimName = "berth-shim"

// Entry is one stdio MCP server entry.
type Entry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// Plan is the entry for one app and where it goes.
type Plan struct {
	App   App
	Path  string // the configuration file
	Name  string // the server's name in it
	Entry Entry
}

// Options choose the entry.
type Options struct {
	// Project is the resolved project root, or "" (only Cursor's global entry,
	// which names the workspace folder instead).
	Project   string
	Shim      []string // the shim's command and leading arguments
	Home      string   // BERTH_HOME to pass the shim; "" for its default
	Name      string   // server name; "" for berth, or berth-<project> in a global file
	UserHome  string
	ConfigDir string
	// Portable writes the project's own file with no path of this machine:
	// the shim by name (found on PATH) and the project as the IDE's
	// workspace folder, so that a team can commit it.
	Portable bool
}

// NewPlan builds the entry of app for o.
func NewPlan(app App, o Options) (Plan, error) {
	if len(o.Shim) == 0 && !o.Portable {
		return Plan{}, errors.New("no berth-shim command")
	}
	if o.Project == "" && app.Name != "cursor" {
		return Plan{}, fmt.Errorf("%s needs the project: pass --project DIR or run inside the project", app.Title)
	}
	project := o.Project
	if project == "" {
		project = WorkspaceFolder
	}
	e := Entry{}
	if o.Portable {
		if app.Global(o.Project) {
			return Plan{}, fmt.Errorf("--portable writes a project's own file, and %s reads only %s, which is yours: use cursor --project DIR or vscode --project DIR",
				app.Title, app.File(o.Project, o.UserHome, o.ConfigDir))
		}
		e.Command, e.Args = ShimName, []string{"--project", WorkspaceFolder}
	} else {
		e.Command, e.Args = o.Shim[0], append(slices.Clone(o.Shim[1:]), "--project", project)
		if o.Home != "" {
			e.Env = map[string]string{api.HomeEnv: o.Home}
		}
	}
	if app.TypeStdio {
		e.Type = "stdio"
	}
	name := o.Name
	if name == "" {
		name = "berth"
		if o.Project != "" && app.Global(o.Project) {
			name = "berth-" + filepath.Base(o.Project)
		}
	}
	return Plan{App: app, Path: app.File(o.Project, o.UserHome, o.ConfigDir), Name: name, Entry: e}, nil
}

// Snippet is a whole file holding only this entry, for printing.
func (p Plan) Snippet() ([]byte, error) {
	return Merge(nil, p.App.ServersKey, p.Name, p.Entry)
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
	if err := d.set(serversKey, name, entry); err != nil {
		return nil, err
	}
	return d.bytes(), nil
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
	return edit(p.Path, func(old []byte) ([]byte, error) {
		return checked(Merge(old, p.App.ServersKey, p.Name, p.Entry))
	})
}

// edit rewrites path (a symlink's target) with change, atomically and
// keeping the mode; the file as it was is first copied to a backup, whose
// path it returns. A missing file is created (no backup); a change that
// changes nothing writes nothing.
func edit(path string, change func(old []byte) ([]byte, error)) (Result, string, error) {
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
		if backup, err = Backup(path, old, mode); err != nil {
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

// Backup writes data, the content of path before a change, beside it as
// path.berth-backup-<UTC time> with mode, and returns its path.
func Backup(path string, data []byte, mode fs.FileMode) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		b := path + ".berth-backup-" + stamp
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
		return b, nil
	}
}

// checked passes on an edit of an app's file only if the result is one
// JSON object with comments and trailing commas allowed (the rules of VS
// Code's and Cursor's mcp.json): Berth never writes what the app cannot read.
func checked(data []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if _, perr := parseDocument(data); perr != nil {
		return nil, fmt.Errorf("the result would not parse (%v)", perr)
	}
	return data, nil
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
