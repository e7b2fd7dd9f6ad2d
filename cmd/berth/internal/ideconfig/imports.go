package ideconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/config"
	"github.com/tailscale/hujson"
)

// appServer is an entry of an app's file, in any app's dialect.
type appServer struct {
	Type     string
	Command  string
	Args     []string
	Env      map[string]string
	Cwd      string
	URL      string
	Headers  bool   // it sends HTTP headers (or a token from the app's environment)
	EnvFile  string // VS Code's envFile
	Keyring  bool   // Goose: variables read from its secrets (env_keys)
	Forwards bool   // Codex: variables forwarded from its environment (env_vars)
	Disabled bool
	Settings bool // Zed: an extension's server (settings, no command)
}

// decodeServer reads one entry of any app's dialect: command as a string
// (most apps), a list (opencode) or {path, args, env} (older Zed files),
// or cmd (Goose); env, envs (Goose) or environment (opencode); url,
// serverUrl (Windsurf), httpUrl (Gemini) or uri (Goose); disabled, or
// enabled: false.
func decodeServer(v any) (appServer, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return appServer{}, errors.New("not an object")
	}
	var s appServer
	var err error
	str := func(keys ...string) string {
		for _, k := range keys {
			if x, ok := m[k]; ok && err == nil {
				if sv, ok := x.(string); ok {
					return sv
				}
				err = fmt.Errorf("%s is not a string", k)
			}
		}
		return ""
	}
	s.Type = str("type", "transportType")
	switch c := m["command"].(type) {
	case []any:
		if s.Args, err = strings_(c, "command"); err == nil && len(s.Args) > 0 {
			s.Command, s.Args = s.Args[0], s.Args[1:]
		}
	case map[string]any: // Zed before 0.19x: "command": {"path", "args", "env"}
		inner, ierr := decodeServer(map[string]any{"command": c["path"], "args": c["args"], "env": c["env"]})
		s.Command, s.Args, s.Env, err = inner.Command, inner.Args, inner.Env, ierr
	default:
		s.Command = str("command", "cmd")
	}
	if a, ok := m["args"]; ok && a != nil && err == nil {
		list, _ := a.([]any)
		var more []string
		if more, err = strings_(list, "args"); err == nil && list == nil {
			err = errors.New("args is not a list of strings")
		}
		s.Args = append(s.Args, more...)
	}
	for _, k := range []string{"env", "envs", "environment"} {
		if e, ok := m[k]; ok && e != nil && err == nil && s.Env == nil {
			em, ok := e.(map[string]any)
			if !ok {
				err = fmt.Errorf("%s is not an object of strings", k)
				break
			}
			s.Env = map[string]string{}
			for ek, ev := range em {
				sv, ok := ev.(string)
				if !ok {
					err = fmt.Errorf("%s.%s is not a string", k, ek)
				}
				s.Env[ek] = sv
			}
		}
	}
	s.Cwd = str("cwd")
	s.URL = str("httpUrl", "url", "serverUrl", "uri")
	s.EnvFile = str("envFile")
	s.Headers = nonEmpty(m["headers"]) || nonEmpty(m["http_headers"]) || nonEmpty(m["env_http_headers"]) || m["bearer_token_env_var"] != nil || m["bearer_token"] != nil
	s.Keyring = nonEmpty(m["env_keys"])
	s.Forwards = nonEmpty(m["env_vars"])
	if d, ok := m["disabled"].(bool); ok && d {
		s.Disabled = true
	}
	if e, ok := m["enabled"].(bool); ok && !e {
		s.Disabled = true
	}
	_, s.Settings = m["settings"]
	return s, err
}

// strings_ reads a list of strings.
func strings_(list []any, what string) ([]string, error) {
	out := []string{}
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a list of strings", what)
		}
		out = append(out, s)
	}
	return out, nil
}

func nonEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	case nil:
		return false
	}
	return true
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

// ReadImports reads the servers of app's file data at keys (Plan.Keys).
// project is the root the servers are for, or "" for every project (the
// broker's config): a server whose arguments name the IDE's workspace
// folder can only be imported into a project (its root is then "." from
// the server's working directory, which is the project root).
func ReadImports(app App, data []byte, keys []string, project string) (Found, error) {
	d, err := parseDoc(app.format, data)
	if err != nil {
		return Found{}, err
	}
	names, raw, err := d.servers(keys)
	if err != nil {
		return Found{}, err
	}
	var f Found
	taken := map[string]string{} // Berth name -> app name
	for _, name := range names {
		s, err := decodeServer(raw[name])
		if err != nil {
			f.Skips = append(f.Skips, Skip{name, "not a server entry Berth can read: " + err.Error()})
			continue
		}
		if IsBerthCommand(s.Command, s.Args) {
			f.Berth = append(f.Berth, name)
			continue
		}
		srv, why := convert(app, s, project)
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
		if tdoc, ok := d.(*tomlDoc); ok {
			if why := tdoc.inlineForm(keys[0], name); why != "" {
				f.Skips = append(f.Skips, Skip{name, why + ": Berth moves only [" + keys[0] + ".NAME] tables; write it as one and import again"})
				continue
			}
		}
		taken[bname] = name
		f.Imports = append(f.Imports, Import{Name: bname, From: name, Server: srv})
	}
	return f, nil
}

// convert turns an app's entry into a Berth definition, or says why it cannot.
func convert(app App, s appServer, project string) (config.Server, string) {
	sse := strings.EqualFold(s.Type, "sse")
	switch {
	case s.Settings && s.Command == "" && s.URL == "":
		return config.Server{}, "a server of a " + app.Title + " extension: it stays in " + app.Title
	case s.Type != "" && !slices.Contains([]string{"stdio", "http", "sse", "streamable-http", "streamableHttp", "streamable_http", "local", "remote"}, s.Type):
		return config.Server{}, fmt.Sprintf("a %s %q extension, not an MCP server Berth can run: it stays in %s", app.Title, s.Type, app.Title)
	case sse:
		return config.Server{}, "an SSE server: Berth connects to streamable HTTP servers (url) and runs commands; keep it in the app"
	case s.Headers:
		return config.Server{}, "it sends HTTP headers (often a token), which Berth's url servers do not: keep it in the app"
	case s.EnvFile != "":
		return config.Server{}, "it reads envFile, which Berth does not: move the variables into env and import again"
	case s.Keyring:
		return config.Server{}, "it reads variables from " + app.Title + "'s secrets (env_keys), which Berth cannot: write them in envs and import again, or keep it in the app"
	case s.Forwards:
		return config.Server{}, "it passes variables from " + app.Title + "'s environment (env_vars), which Berth does not: write them in env and import again, or keep it in the app"
	case s.Command == "" && s.URL == "":
		return config.Server{}, "neither a command nor a url"
	}
	url := s.URL
	if s.Command != "" {
		url = ""
	}
	srv := config.Server{Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: url}
	if len(srv.Args) == 0 {
		srv.Args = nil
	}
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
// (${env:NAME}, ${input:id}, ${userHome} of VS Code and Cursor; ${VAR} of
// Claude Code; $VAR of Gemini; {env:VAR} and {file:path} of opencode).
var appVariable = regexp.MustCompile(`\$\{[^}]*\}|\{(env|file):[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)

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
	d, err := parseDoc(p.App.format, data)
	if err != nil {
		return nil, err
	}
	if j, ok := d.(jsonDoc); ok {
		trailing := false // the servers' trailing comma, kept through the removals
		if obj, _ := j.d.object(p.Keys); obj != nil && len(obj.Members) > 0 {
			trailing = obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
		}
		for _, im := range imported {
			j.d.removeNamed(p.Keys, im.From)
		}
		if obj, _ := j.d.object(p.Keys); obj != nil && len(obj.Members) > 0 && trailing {
			if last := &obj.Members[len(obj.Members)-1].Value; last.AfterExtra == nil {
				last.AfterExtra = hujson.Extra{}
			}
		}
	} else {
		for _, im := range imported {
			if err := d.remove(p.Keys, im.From); err != nil {
				return nil, err
			}
		}
	}
	if err := d.set(p.Keys, p.Name, p.value); err != nil {
		return nil, err
	}
	out := d.bytes()
	changed := map[string]object{p.Name: p.value}
	for _, im := range imported {
		changed[im.From] = nil
	}
	if err := verify(p.App.format, data, out, p.Keys, changed); err != nil {
		return nil, err
	}
	return out, nil
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
		if err := d.set([]string{"servers"}, im.Name, raw); err != nil {
			return nil, err
		}
	}
	return d.bytes(), nil
}

// Edit rewrites path with change as Write does: atomically, keeping the
// mode, with a backup of the old content in backupDir ("" beside it); the
// backup's path is returned.
func Edit(path, backupDir string, change func(old []byte) ([]byte, error)) (Result, string, error) {
	return edit(path, backupDir, change)
}

// BerthEntries returns the entries at keys of app's file data that run
// Berth's shim, and those that name a URL (by name: the URL).
func BerthEntries(app App, data []byte, keys []string) (map[string]Entry, map[string]string, error) {
	d, err := parseDoc(app.format, data)
	if err != nil {
		return nil, nil, err
	}
	_, raw, err := d.servers(keys)
	if err != nil {
		return nil, nil, err
	}
	shims, urls := map[string]Entry{}, map[string]string{}
	for name, r := range raw {
		s, err := decodeServer(r)
		switch {
		case err != nil:
		case IsBerthCommand(s.Command, s.Args):
			shims[name] = Entry{Command: s.Command, Args: s.Args, Env: s.Env}
		case s.Command == "" && s.URL != "":
			urls[name] = s.URL
		}
	}
	return shims, urls, nil
}
