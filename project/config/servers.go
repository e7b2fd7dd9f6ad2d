package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Values of Server.Share.
const (
	ShareProject = "project" // one process per project (the default)
	ShareUser    = "user"    // one process for every project that declares the same server
	// ShareRepository runs one process for every worktree of a git
	// repository that declares the same server (one per project for a
	// project in no repository).
	ShareRepository = "repository"
)

// Values of Server.Start.
const (
	StartLazy  = "lazy"  // started by the first session that lists or calls its tools (the default)
	StartEager = "eager" // started when the project is mounted
)

// MaxServerName is the longest server name: it prefixes every tool name,
// and MCP tool names stop at 128 characters.
const MaxServerName = 32

// Server declares one MCP server that Berth runs (command) or connects to
// (url) for a project, and serves as <name>__<tool>. Load fills the
// defaults: Enabled true, Share "project", Start "lazy".
type Server struct {
	Command string            `mapstructure:"command" yaml:"command" json:"command,omitempty"`
	Args    []string          `mapstructure:"args" yaml:"args" json:"args,omitempty"`
	Env     map[string]string `mapstructure:"env" yaml:"env" json:"env,omitempty"`
	Cwd     string            `mapstructure:"cwd" yaml:"cwd" json:"cwd,omitempty"` // relative to the project root; "" = the root
	URL     string            `mapstructure:"url" yaml:"url" json:"url,omitempty"` // a streamable HTTP endpoint instead of a command
	// Roots are the directories Berth answers the server's roots/list
	// with (relative to the project root, or absolute). nil: the folders
	// its args name, else the project root; empty: none.
	Roots       []string      `mapstructure:"roots" yaml:"roots" json:"roots,omitempty"`
	Enabled     *bool         `mapstructure:"enabled" yaml:"enabled" json:"enabled,omitempty"`
	Share       string        `mapstructure:"share" yaml:"share" json:"share,omitempty"`
	Start       string        `mapstructure:"start" yaml:"start" json:"start,omitempty"`
	Tools       ToolFilter    `mapstructure:"tools" yaml:"tools" json:"tools,omitzero"`
	CallTimeout time.Duration `mapstructure:"call_timeout" yaml:"-" json:"call_timeout,omitempty"` // 0 = the broker's default
}

// ToolFilter trims the tools a server offers: a tool is served when it
// matches an Allow pattern (or Allow is empty) and no Deny pattern.
// Patterns are path.Match globs ("read_*").
type ToolFilter struct {
	Allow []string `mapstructure:"allow" yaml:"allow" json:"allow,omitempty"`
	Deny  []string `mapstructure:"deny" yaml:"deny" json:"deny,omitempty"`
}

// Allows reports whether the tool name passes the filter.
func (f ToolFilter) Allows(name string) bool {
	match := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, name); return ok })
	}
	return (len(f.Allow) == 0 || match(f.Allow)) && !match(f.Deny)
}

// IsEnabled reports whether the server should run (Enabled unset means yes).
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Digest is a stable SHA-256 of what the definition runs and reaches:
// command, args, env, cwd, url, share and roots, as canonical JSON.
// Approval records it; editing any of those fields changes it, while
// enabled, start, tools and call_timeout do not. A definition without
// roots has the digest it had before roots existed.
func (s Server) Digest() string {
	runs := struct {
		V       int               `json:"v"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"` // encoding/json sorts map keys
		Cwd     string            `json:"cwd"`
		URL     string            `json:"url"`
		Share   string            `json:"share"`
		Roots   *[]string         `json:"roots,omitempty"` // set (even empty) or not
	}{V: 1, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Share: s.Share}
	if s.Roots != nil {
		runs.Roots = &s.Roots
	}
	if runs.Args == nil {
		runs.Args = []string{}
	}
	if runs.Env == nil {
		runs.Env = map[string]string{}
	}
	if runs.Share == "" {
		runs.Share = ShareProject
	}
	raw, err := json.Marshal(runs)
	if err != nil { // strings only: cannot happen
		panic(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

var serverName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]|_[a-z0-9-])*$`)

// ValidServerName returns an error naming the fix when name cannot prefix
// tool names: lowercase letters, digits, '-' and single '_', starting with a
// letter or digit, at most MaxServerName characters.
func ValidServerName(name string) error {
	if len(name) > MaxServerName || !serverName.MatchString(name) {
		return fmt.Errorf("%q is not a valid tool prefix (use at most %d lowercase letters, digits, '-' and single '_', starting with a letter or digit, e.g. \"memory\")", name, MaxServerName)
	}
	return nil
}

// ValidateServers checks every definition and fills its defaults. Errors
// name the server, the field and the fix.
func ValidateServers(servers map[string]Server) error {
	if len(servers) > MaxServers {
		return &keyError{key: "servers", msg: fmt.Sprintf("servers: %d servers declared, at most %d are served from one config (remove some)", len(servers), MaxServers)}
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := servers[name]
		if err := s.validate(name); err != nil {
			return &keyError{key: "servers." + name, msg: err.Error()}
		}
		servers[name] = s
	}
	return nil
}

func (s *Server) validate(name string) error {
	key := "servers." + name
	if err := ValidServerName(name); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := s.bounded(key); err != nil {
		return err
	}
	switch {
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("%s: both command and url are set (a server is a command Berth runs or a url it connects to: keep one)", key)
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("%s: set command (the program to run, e.g. npx) or url (a streamable HTTP endpoint)", key)
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s.url %q is not an http(s) URL (e.g. http://127.0.0.1:3001/mcp)", key, s.URL)
		}
		if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
			return fmt.Errorf("%s: args, env and cwd apply to a command, not to a url server (remove them)", key)
		}
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("%s.env: %q is not an environment variable name", key, k)
		}
	}
	switch s.Share {
	case "":
		s.Share = ShareProject
	case ShareProject, ShareRepository, ShareUser:
	default:
		return fmt.Errorf("%s.share %q: use project (one process per project, the default), repository (one process for every worktree of the project's git repository) or user (one process for every project)", key, s.Share)
	}
	switch s.Start {
	case "":
		s.Start = StartLazy
	case StartLazy, StartEager:
	default:
		return fmt.Errorf("%s.start %q: use lazy (start on first use, the default) or eager (start with the project)", key, s.Start)
	}
	if s.Share == ShareUser && s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		return fmt.Errorf("%s.cwd %q: a share: user server serves every project, so its cwd must be absolute (or empty: the home directory)", key, s.Cwd)
	}
	if s.CallTimeout < 0 {
		return fmt.Errorf("%s.call_timeout %s must not be negative (0 = the broker's default)", key, s.CallTimeout)
	}
	for field, patterns := range map[string][]string{"allow": s.Tools.Allow, "deny": s.Tools.Deny} {
		for _, p := range patterns {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("%s.tools.%s: pattern %q: %v (use * and ? globs, e.g. read_*)", key, field, p, err)
			}
		}
	}
	return nil
}

// rawServer is Server as written in the file: names and env keys keep
// their case here, durations are strings.
type rawServer struct {
	Server      `yaml:",inline"`
	CallTimeout string `yaml:"call_timeout"`
}

// ServersSchema is the form of a servers: section, in a project's config
// and in the broker's.
var ServersSchema = &Schema{Kind: KindMap, Example: "{memory: {command: npx, args: [-y, \"@modelcontextprotocol/server-memory\"]}}",
	Entry: &Schema{Kind: KindSection, Example: "{command: npx, args: [...]}", Keys: map[string]*Schema{
		"command":      {Kind: KindString, Example: "npx"},
		"args":         {Kind: KindStrings, Example: "[-y, \"@modelcontextprotocol/server-memory\"]"},
		"env":          {Kind: KindMap, Example: "{API_KEY: x}", Entry: &Schema{Kind: KindString}},
		"cwd":          {Kind: KindString, Example: "tools"},
		"url":          {Kind: KindString, Example: "http://127.0.0.1:3001/mcp"},
		"roots":        {Kind: KindStrings, Example: "[src, docs]"},
		"enabled":      {Kind: KindBool},
		"share":        {Kind: KindString, Example: ShareProject},
		"start":        {Kind: KindString, Example: StartLazy},
		"tools":        {Kind: KindSection, Example: "{deny: [delete_*]}", Keys: map[string]*Schema{"allow": {Kind: KindStrings, Example: "[read_*]"}, "deny": {Kind: KindStrings, Example: "[delete_*]"}}},
		"call_timeout": {Kind: KindDuration, Example: "30s"},
	}}}

// ReadServers reads the servers section of file (YAML or JSON), strictly
// (as Load does), keeping the case of server names and env keys. Pass the
// result to ValidateServers. The broker's config file declares servers the
// same way.
func ReadServers(file string) (map[string]Server, error) {
	data, err := ReadFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := ParseFile(file, data)
	if err != nil {
		return nil, err
	}
	return ServersIn(file, doc)
}

// ServersIn checks and decodes the servers section of doc, a parsed
// config file (ParseFile); nil when it has none. Pass the result to
// ValidateServers.
func ServersIn(file string, doc *yaml.Node) (map[string]Server, error) {
	n := findKey(doc, "servers")
	if n == nil {
		return nil, nil
	}
	if err := (checker{file: file, root: ServersSchema}).check("servers", n, ServersSchema); err != nil {
		return nil, err
	}
	if err := checkNullServers(file, doc); err != nil {
		return nil, err
	}
	dropNulls(n)
	var raw map[string]rawServer
	if err := n.Decode(&raw); err != nil {
		return nil, &Error{File: file, Line: n.Line, Column: n.Column, Msg: "servers: " + err.Error()}
	}
	servers, err := decodeServers(raw)
	if err != nil {
		return nil, placeError(file, doc, err)
	}
	return servers, nil
}

// decodeServers turns the servers as written into Servers.
func decodeServers(raw map[string]rawServer) (map[string]Server, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]Server, len(raw))
	for name, r := range raw {
		s := r.Server
		if r.CallTimeout != "" {
			d, err := ParseDuration(r.CallTimeout)
			if err != nil {
				key := "servers." + name + ".call_timeout"
				return nil, keyErrorf(key, "%s", FormError(key, r.CallTimeout, KindDuration, "30s"))
			}
			s.CallTimeout = d
		}
		out[name] = s
	}
	return out, nil
}

// LoadServers is ServersIn followed by ValidateServers, with an error at
// the server's line and column: the broker's config declares servers with it.
func LoadServers(file string, doc *yaml.Node) (map[string]Server, error) {
	servers, err := ServersIn(file, doc)
	if err != nil {
		return nil, err
	}
	if err := ValidateServers(servers); err != nil {
		return nil, placeError(file, doc, err)
	}
	return servers, nil
}

// checkNullServers refuses a server declared with nothing (`memory:` or
// `memory: null`), which would otherwise vanish without a word.
func checkNullServers(file string, doc *yaml.Node) error {
	n := findKey(doc, "servers")
	if n == nil {
		return nil
	}
	if n = resolveAlias(n); n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isNull(resolveAlias(n.Content[i+1])) {
			k := n.Content[i]
			return &Error{File: file, Line: k.Line, Column: k.Column, Msg: fmt.Sprintf(
				"servers.%s is empty: declare its command (or url) below it, or remove the line (to keep it but not run it: enabled: false)", k.Value)}
		}
	}
	return nil
}
