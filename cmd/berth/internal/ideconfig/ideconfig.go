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
	"strings"

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

// WorkspaceFolder is Cursor's variable for the open workspace, used by the
// global Cursor entry when no project is named.
const WorkspaceFolder = "${workspaceFolder}"

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
}

// NewPlan builds the entry of app for o.
func NewPlan(app App, o Options) (Plan, error) {
	if len(o.Shim) == 0 {
		return Plan{}, errors.New("no berth-shim command")
	}
	if o.Project == "" && !(app.Name == "cursor") {
		return Plan{}, fmt.Errorf("%s needs the project: pass --project DIR or run inside the project", app.Title)
	}
	project := o.Project
	if project == "" {
		project = WorkspaceFolder
	}
	e := Entry{Command: o.Shim[0], Args: append(slices.Clone(o.Shim[1:]), "--project", project)}
	if app.TypeStdio {
		e.Type = "stdio"
	}
	if o.Home != "" {
		e.Env = map[string]string{api.HomeEnv: o.Home}
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

// Merge returns existing with the server name set to e under serversKey;
// every other server and top-level key is kept, in its order.
func Merge(existing []byte, serversKey, name string, e Entry) ([]byte, error) {
	top, err := parseObject(existing)
	var no notObjectError
	if errors.As(err, &no) {
		return nil, fmt.Errorf("the file %w", err)
	} else if err != nil {
		return nil, err
	}
	var servers object
	if raw, ok := top.get(serversKey); ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%q %w", serversKey, err)
		}
	}
	entry, err := marshalNoEscape(e)
	if err != nil {
		return nil, err
	}
	servers.set(name, entry)
	raw, err := servers.compact()
	if err != nil {
		return nil, err
	}
	top.set(serversKey, raw)
	return top.marshal()
}

// Result says what Write did.
type Result int

// Results of Write.
const (
	Unchanged Result = iota
	Created
	Updated
)

// Write merges the plan's entry into its file atomically. A file that does
// not parse is refused and left as it is.
func (p Plan) Write() (Result, error) {
	path := p.Path
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
		return 0, fmt.Errorf("read %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	merged, err := Merge(old, p.App.ServersKey, p.Name, p.Entry)
	if err != nil {
		return 0, fmt.Errorf("cannot merge into %s: %s; fix the file or move it aside and run again (nothing was changed)", path, describe(old, err))
	}
	if res == Updated && bytes.Equal(old, merged) {
		return Unchanged, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := api.WriteFileAtomic(path, merged, mode); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return res, nil
}

// describe adds the line and column to a JSON syntax error (taken from
// encoding/json's full parse, whose offset points just past the bad byte).
func describe(data []byte, err error) string {
	var se *json.SyntaxError
	if uerr := json.Unmarshal(data, new(any)); errors.As(uerr, &se) && se.Offset > 0 && se.Offset <= int64(len(data)) {
		at := int(se.Offset) - 1
		line := bytes.Count(data[:at], []byte("\n")) + 1
		col := at - (bytes.LastIndexByte(data[:at], '\n') + 1) + 1
		return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)
	}
	return err.Error()
}
