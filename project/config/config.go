// Package config reads a project's own settings from <root>/.praxis-os/config.yaml,
// or from config.json (the praxis-os file) when there is no config.yaml.
package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/berth-dev/berth/api"
)

// Dir is the name of the per-project folder that marks a project root
// (part of Berth's contract: api.ProjectDir).
const Dir = api.ProjectDir

// Tool groups a project can enable.
const (
	GroupRAG      = "rag"
	GroupWorkflow = "workflow"
	GroupPOS      = "pos"
)

// DefaultPort is the preferred MCP port when a project names none.
const DefaultPort = 4242

// Defaults of the per-project limits; 0 in a config file means no limit.
const (
	DefaultMaxSessions  = 10 // network MCP sessions open at once
	DefaultMaxToolCalls = 16 // tool calls running at once, all sessions together
)

// MCP holds the mcp.* keys.
type MCP struct {
	HTTPPort          int      `mapstructure:"http_port" yaml:"http_port"`
	EnabledToolGroups []string `mapstructure:"enabled_tool_groups" yaml:"enabled_tool_groups"`
	MaxToolsWarning   int      `mapstructure:"max_tools_warning" yaml:"max_tools_warning"`
	MaxSessions       int      `mapstructure:"max_sessions" yaml:"max_sessions"`
	MaxToolCalls      int      `mapstructure:"max_tool_calls" yaml:"max_tool_calls"`
	// ToolsListing is what a session's tools/list holds: every tool (all),
	// Berth's core tools with find_tools and call_tool (finder), or the
	// finder once the project offers more than FinderThreshold tools, for
	// clients that do not search tools themselves (auto).
	ToolsListing    string `mapstructure:"tools_listing" yaml:"tools_listing"`
	FinderThreshold int    `mapstructure:"finder_threshold" yaml:"finder_threshold"`
}

// Listing modes of mcp.tools_listing.
const (
	ListingAll    = "all"
	ListingFinder = "finder"
	ListingAuto   = "auto"
)

// DefaultFinderThreshold is mcp.finder_threshold's default: where Cursor
// starts to warn.
const DefaultFinderThreshold = 40

// Finder holds the finder.* keys (broker/finder).
type Finder struct {
	// Promote adds a tool that a session found and called through
	// call_tool to that session's tools/list.
	Promote bool `mapstructure:"promote" yaml:"promote"`
	// ClientsWithToolSearch are the clientInfo names of clients that
	// search their tools themselves: auto lists every tool to them.
	ClientsWithToolSearch []string `mapstructure:"clients_with_tool_search" yaml:"clients_with_tool_search"`
}

// DefaultClientsWithToolSearch are the clients known to search tools
// themselves: Claude Code and the GitHub Copilot CLI.
var DefaultClientsWithToolSearch = []string{"claude-code", "github-copilot-developer"}

// RAG holds the rag.* keys: source folders relative to the project root,
// and the folders outside it that symlinks in them may lead to.
type RAG struct {
	StandardsPath string `mapstructure:"standards_path" yaml:"standards_path"`
	UsagePath     string `mapstructure:"usage_path" yaml:"usage_path"`
	WorkflowsPath string `mapstructure:"workflows_path" yaml:"workflows_path"`
	// AllowOutside lists directories outside the project that indexing may
	// follow symlinks into; absolute after Load (relative entries are taken
	// from the root, "~" is the home directory). Load empties it when the
	// config file is not the user's own (see Config.Warnings).
	AllowOutside []string `mapstructure:"allow_outside" yaml:"allow_outside"`
}

// Config is one project's configuration with defaults applied.
type Config struct {
	MCP    MCP    `mapstructure:"mcp"`
	RAG    RAG    `mapstructure:"rag"`
	Finder Finder `mapstructure:"finder"`
	// Servers are the MCP servers the project declares (servers.go).
	Servers map[string]Server `mapstructure:"servers"`
	// File is the file the settings came from, or "" when defaults alone apply.
	File string `mapstructure:"-"`
	// Warnings name settings Load ignored (a tool group Berth does not
	// serve, rag.allow_outside in a file others may write), with the fix.
	Warnings []string `mapstructure:"-"`
}

// Default returns the settings of a project with no config file.
func Default() Config {
	return Config{
		MCP: MCP{
			HTTPPort:          DefaultPort,
			EnabledToolGroups: []string{GroupRAG, GroupWorkflow},
			MaxToolsWarning:   20,
			MaxSessions:       DefaultMaxSessions,
			MaxToolCalls:      DefaultMaxToolCalls,
			ToolsListing:      ListingAll,
			FinderThreshold:   DefaultFinderThreshold,
		},
		Finder: Finder{ClientsWithToolSearch: slices.Clone(DefaultClientsWithToolSearch)},
		RAG: RAG{
			StandardsPath: filepath.Join(Dir, "standards"),
			UsagePath:     filepath.Join(Dir, "usage"),
			WorkflowsPath: filepath.Join(Dir, "workflows"),
		},
	}
}

// Files are the names of the config files in Dir, in the order Load
// looks for them: the first that exists is read.
var Files = []string{"config.yaml", "config.yml", "config.json"}

// Load reads the config of the project at root. A missing file gives the
// defaults. A file that does not parse, holds a key Berth does not know or
// a value of the wrong form is an *Error naming the file, the line and
// column, the key and the fix.
func Load(root string) (Config, error) {
	cfg := Default()
	dir := filepath.Join(root, Dir)
	var file string
	for _, name := range Files {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			file = p
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return cfg, &Error{File: p, Msg: err.Error()}
		}
	}
	if file == "" {
		return cfg, nil
	}
	data, err := ReadFile(file)
	if err != nil {
		return cfg, err
	}
	doc, err := ParseFile(file, data)
	if err != nil {
		return cfg, err
	}
	if err := Check(file, doc, projectSchema); err != nil {
		return cfg, err
	}
	if err := checkNullServers(file, doc); err != nil {
		return cfg, err
	}
	dropNulls(doc)
	var f struct {
		MCP     *MCP                 `yaml:"mcp"`
		RAG     *RAG                 `yaml:"rag"`
		Finder  *Finder              `yaml:"finder"`
		Servers map[string]rawServer `yaml:"servers"`
	}
	f.MCP, f.RAG, f.Finder = &cfg.MCP, &cfg.RAG, &cfg.Finder
	if err := doc.Decode(&f); err != nil {
		return cfg, &Error{File: file, Msg: err.Error()}
	}
	if cfg.Servers, err = decodeServers(f.Servers); err != nil {
		return cfg, placeError(file, doc, err)
	}
	cfg.File = file
	if err := cfg.validate(); err != nil {
		return cfg, placeError(file, doc, err)
	}
	cfg.checkGroups(doc)
	if err := cfg.loadAllowOutside(root); err != nil {
		return cfg, placeError(file, doc, err)
	}
	return cfg, nil
}

func (c *Config) validate() error {
	if c.MCP.HTTPPort < 0 || c.MCP.HTTPPort > 65535 {
		return keyErrorf("mcp.http_port", "mcp.http_port %d is not a port (use 1-65535)", c.MCP.HTTPPort)
	}
	if c.MCP.HTTPPort == 0 {
		c.MCP.HTTPPort = DefaultPort
	}
	if c.MCP.MaxSessions < 0 {
		return keyErrorf("mcp.max_sessions", "mcp.max_sessions %d must not be negative (0 = no limit)", c.MCP.MaxSessions)
	}
	if c.MCP.MaxToolCalls < 0 {
		return keyErrorf("mcp.max_tool_calls", "mcp.max_tool_calls %d must not be negative (0 = no limit)", c.MCP.MaxToolCalls)
	}
	switch c.MCP.ToolsListing {
	case "":
		c.MCP.ToolsListing = ListingAll
	case ListingAll, ListingFinder, ListingAuto:
	default:
		return keyErrorf("mcp.tools_listing", "mcp.tools_listing %q: use all, finder or auto", c.MCP.ToolsListing)
	}
	if c.MCP.FinderThreshold < 0 {
		return keyErrorf("mcp.finder_threshold", "mcp.finder_threshold %d must not be negative (auto lists the finder past that many tools)", c.MCP.FinderThreshold)
	}
	def := Default()
	if c.RAG.StandardsPath == "" {
		c.RAG.StandardsPath = def.RAG.StandardsPath
	}
	if c.RAG.UsagePath == "" {
		c.RAG.UsagePath = def.RAG.UsagePath
	}
	if c.RAG.WorkflowsPath == "" {
		c.RAG.WorkflowsPath = def.RAG.WorkflowsPath
	}
	for _, kp := range []struct{ key, path string }{
		{"rag.standards_path", c.RAG.StandardsPath}, {"rag.usage_path", c.RAG.UsagePath}, {"rag.workflows_path", c.RAG.WorkflowsPath},
	} {
		if filepath.IsAbs(kp.path) || !filepath.IsLocal(filepath.Clean(kp.path)) {
			return keyErrorf(kp.key, "%s %q must be a relative path inside the project", kp.key, kp.path)
		}
	}
	return ValidateServers(c.Servers)
}

// HasGroup reports whether the tool group is enabled.
func (c Config) HasGroup(g string) bool { return slices.Contains(c.MCP.EnabledToolGroups, g) }
