package ideconfig

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/config"
	"github.com/tailscale/hujson"
)

// appServer is an entry of an app's MCP file, in any app's dialect.
type appServer struct {
	Type      string            `json:"type"` // stdio, http, sse, streamable-http
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf's name for url
	Headers   map[string]string `json:"headers"`
	EnvFile   string            `json:"envFile"`
	Disabled  bool              `json:"disabled"`
}

// Import is one server of an app's file, as Berth declares it.
type Import struct {
	Name   string // its name in Berth's config: a valid tool prefix
	From   string // its name in the app's file
	Server config.Server
}

// Skip is a server an import leaves in the app's file, and why.
type Skip struct {
	Name string
	Why  string
}

// Found is what an app's file holds.
type Found struct {
	Imports []Import
	Skips   []Skip
	Berth   []string // the entries that already run berth-shim (kept)
}

// ReadImports reads the servers of app's file data. project is the root
// the servers are for, or "" for every project (the broker's config): a
// server whose arguments name the IDE's workspace folder can only be
// imported into a project (its root is then "." from the server's working
// directory, which is the project root).
func ReadImports(app App, data []byte, project string) (Found, error) {
	d, err := parseDocument(data)
	if err != nil {
		return Found{}, err
	}
	names, raw, err := d.entries(app.ServersKey)
	if err != nil {
		return Found{}, err
	}
	var f Found
	taken := map[string]string{} // Berth name -> app name
	for _, name := range names {
		var s appServer
		if err := json.Unmarshal(raw[name], &s); err != nil {
			f.Skips = append(f.Skips, Skip{name, "not a server entry Berth can read: " + err.Error()})
			continue
		}
		if IsBerthCommand(s.Command, s.Args) {
			f.Berth = append(f.Berth, name)
			continue
		}
		srv, why := convert(s, project)
		if why != "" {
			f.Skips = append(f.Skips, Skip{name, why})
			continue
		}
		bname := ServerName(name)
		if err := config.ValidServerName(bname); err != nil {
			f.Skips = append(f.Skips, Skip{name, fmt.Sprintf("its name does not make a tool prefix (%v): rename it in the app and import again", err)})
			continue
		}
		if other, dup := taken[bname]; dup {
			f.Skips = append(f.Skips, Skip{name, fmt.Sprintf("its Berth name %q is taken by %q: rename one in the app and import again", bname, other)})
			continue
		}
		check := map[string]config.Server{bname: srv}
		if err := config.ValidateServers(check); err != nil {
			f.Skips = append(f.Skips, Skip{name, err.Error()})
			continue
		}
		taken[bname] = name
		f.Imports = append(f.Imports, Import{Name: bname, From: name, Server: srv})
	}
	return f, nil
}

// convert turns an app's entry into a Berth definition, or says why it cannot.
func convert(s appServer, project string) (config.Server, string) {
	url := s.URL
	if url == "" {
		url = s.ServerURL
	}
	switch {
	case strings.EqualFold(s.Type, "sse"):
		return config.Server{}, "an SSE server: Berth connects to streamable HTTP servers (url) and runs commands; keep it in the app"
	case len(s.Headers) > 0:
		return config.Server{}, "it sends HTTP headers (often a token), which Berth's url servers do not: keep it in the app"
	case s.EnvFile != "":
		return config.Server{}, "it reads envFile, which Berth does not: move the variables into env and import again"
	case s.Command == "" && url == "":
		return config.Server{}, "neither a command nor a url"
	}
	srv := config.Server{Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: url}
	if s.Disabled {
		no := false
		srv.Enabled = &no
	}
	// The workspace folder is the project root, the server's working directory.
	fields := append([]string{srv.Command, srv.Cwd, srv.URL}, srv.Args...)
	for _, v := range srv.Env {
		fields = append(fields, v)
	}
	if slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(f, WorkspaceFolder) }) {
		if project == "" {
			return config.Server{}, "it names " + WorkspaceFolder + ", which only a project has: import it with --project DIR"
		}
		srv.Command = workspaceRelative(srv.Command)
		srv.Cwd = strings.TrimPrefix(workspaceRelative(srv.Cwd), "./")
		if srv.Cwd == "." {
			srv.Cwd = ""
		}
		for i, a := range srv.Args {
			srv.Args[i] = workspaceRelative(a)
		}
		for k, v := range srv.Env {
			srv.Env[k] = workspaceRelative(v)
		}
	}
	if m := appVariable.FindString(strings.Join(append(fields, srv.Command), " ")); m != "" && !strings.Contains(m, "workspaceFolder}") {
		return config.Server{}, "it uses " + m + ", which the app expands and Berth does not: keep it in the app, or write the value and import again"
	}
	return srv, ""
}

// appVariable matches the variables apps expand in their MCP files
// (${env:NAME}, ${input:id}, ${userHome}).
var appVariable = regexp.MustCompile(`\$\{[^}]*\}`)

// workspaceRelative replaces the workspace folder by ".", the project root
// as seen from the server's working directory.
func workspaceRelative(s string) string {
	s = strings.ReplaceAll(s, WorkspaceFolder+"/", "./")
	return strings.ReplaceAll(s, WorkspaceFolder, ".")
}

// ServerName makes an app's server name a Berth server name: lowercase,
// letters, digits, '-' and single '_'; "GitHub Copilot" becomes
// "github-copilot".
func ServerName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	for strings.Contains(out, "--") {
		out = strings.ReplaceAll(out, "--", "-")
	}
	out = strings.Trim(out, "-_")
	if len(out) > config.MaxServerName {
		out = strings.Trim(out[:config.MaxServerName], "-_")
	}
	return out
}

// IsBerthCommand reports whether an entry runs Berth's shim (berth-shim,
// or `berth shim`).
func IsBerthCommand(command string, args []string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	return base == ShimName || (base == "berth" && len(args) > 0 && args[0] == "shim")
}

// LeaveOnlyBerth returns app's file data without the imported servers and
// with the plan's entry set; the servers it skipped, other Berth entries
// and every other key stay as they were.
func LeaveOnlyBerth(data []byte, p Plan, imported []Import) ([]byte, error) {
	d, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	trailing := false // the servers' trailing comma, kept through the removals
	if obj, _ := d.servers(p.App.ServersKey); obj != nil && len(obj.Members) > 0 {
		trailing = obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	}
	for _, im := range imported {
		d.removeNamed(p.App.ServersKey, im.From)
	}
	if obj, _ := d.servers(p.App.ServersKey); obj != nil && len(obj.Members) > 0 && trailing {
		if last := &obj.Members[len(obj.Members)-1].Value; last.AfterExtra == nil {
			last.AfterExtra = hujson.Extra{}
		}
	}
	entry, err := marshalNoEscape(p.Entry)
	if err != nil {
		return nil, err
	}
	if err := d.set(p.App.ServersKey, p.Name, entry); err != nil {
		return nil, err
	}
	return checked(d.bytes(), nil)
}

// SetJSONServers returns data, a JSON config (praxis-os's config.json),
// with the servers set under its "servers" key, keeping the rest.
func SetJSONServers(data []byte, imports []Import) ([]byte, error) {
	d, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	for _, im := range imports {
		raw, err := marshalNoEscape(im.Server)
		if err != nil {
			return nil, err
		}
		if err := d.set("servers", im.Name, raw); err != nil {
			return nil, err
		}
	}
	return d.bytes(), nil
}

// Edit rewrites path with change as Write does: atomically, keeping the
// mode, with a backup of the old content (its path is returned).
func Edit(path string, change func(old []byte) ([]byte, error)) (Result, string, error) {
	return edit(path, change)
}

// BerthEntries returns the entries of app's file data that run Berth's shim.
func BerthEntries(app App, data []byte) (map[string]Entry, error) {
	d, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	_, raw, err := d.entries(app.ServersKey)
	if err != nil {
		return nil, err
	}
	out := map[string]Entry{}
	for name, r := range raw {
		var e Entry
		if json.Unmarshal(r, &e) == nil && IsBerthCommand(e.Command, e.Args) {
			out[name] = e
		}
	}
	return out, nil
}
