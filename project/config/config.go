// Package config reads a project's own settings from <root>/.praxis-os/config.yaml,
// or from config.json (the praxis-os file) when there is no config.yaml.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/berth-dev/berth/api"
	"github.com/spf13/viper"
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
	HTTPPort          int      `mapstructure:"http_port"`
	EnabledToolGroups []string `mapstructure:"enabled_tool_groups"`
	MaxToolsWarning   int      `mapstructure:"max_tools_warning"`
	MaxSessions       int      `mapstructure:"max_sessions"`
	MaxToolCalls      int      `mapstructure:"max_tool_calls"`
}

// RAG holds the rag.* keys: source folders relative to the project root,
// and the folders outside it that symlinks in them may lead to.
type RAG struct {
	StandardsPath string `mapstructure:"standards_path"`
	UsagePath     string `mapstructure:"usage_path"`
	WorkflowsPath string `mapstructure:"workflows_path"`
	// AllowOutside lists directories outside the project that indexing may
	// follow symlinks into; absolute after Load (relative entries are taken
	// from the root, "~" is the home directory). Load empties it when the
	// config file is not the user's own (see Config.Warnings).
	AllowOutside []string `mapstructure:"allow_outside"`
}

// Config is one project's configuration with defaults applied.
type Config struct {
	MCP MCP `mapstructure:"mcp"`
	RAG RAG `mapstructure:"rag"`
	// Servers are the MCP servers the project declares (servers.go).
	Servers map[string]Server `mapstructure:"servers"`
	// File is the file the settings came from, or "" when defaults alone apply.
	File string `mapstructure:"-"`
	// Warnings name settings Load ignored, with the fix.
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
		},
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
// defaults; an unreadable or invalid one is an error naming the file.
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
			return cfg, fmt.Errorf("project config %s: %w", p, err)
		}
	}
	if file == "" {
		return cfg, nil
	}
	v := viper.New()
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return cfg, fmt.Errorf("project config %s: %w (fix the syntax or remove the file)", file, err)
	}
	servers, err := ReadServers(file)
	if err != nil {
		return cfg, fmt.Errorf("project config %s: %w", file, err)
	}
	if err := v.Unmarshal(&cfg); err != nil {
		return cfg, fmt.Errorf("project config %s: %w", file, err)
	}
	cfg.Servers = servers
	cfg.File = file
	if err := cfg.validate(); err != nil {
		return cfg, fmt.Errorf("project config %s: %w", file, err)
	}
	if err := cfg.loadAllowOutside(root); err != nil {
		return cfg, fmt.Errorf("project config %s: %w", file, err)
	}
	return cfg, nil
}

func (c *Config) validate() error {
	if c.MCP.HTTPPort < 0 || c.MCP.HTTPPort > 65535 {
		return fmt.Errorf("mcp.http_port %d is not a port (use 1-65535)", c.MCP.HTTPPort)
	}
	if c.MCP.HTTPPort == 0 {
		c.MCP.HTTPPort = DefaultPort
	}
	if c.MCP.MaxSessions < 0 || c.MCP.MaxToolCalls < 0 {
		return fmt.Errorf("mcp.max_sessions (%d) and mcp.max_tool_calls (%d) must not be negative (0 = no limit)", c.MCP.MaxSessions, c.MCP.MaxToolCalls)
	}
	known := []string{GroupRAG, GroupWorkflow, GroupPOS}
	for _, g := range c.MCP.EnabledToolGroups {
		if !slices.Contains(known, g) {
			return fmt.Errorf("mcp.enabled_tool_groups: unknown group %q (known: rag, workflow, pos)", g)
		}
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
	for key, p := range map[string]string{"rag.standards_path": c.RAG.StandardsPath, "rag.usage_path": c.RAG.UsagePath, "rag.workflows_path": c.RAG.WorkflowsPath} {
		if filepath.IsAbs(p) || !filepath.IsLocal(filepath.Clean(p)) {
			return fmt.Errorf("%s %q must be a relative path inside the project", key, p)
		}
	}
	return ValidateServers(c.Servers)
}

// HasGroup reports whether the tool group is enabled.
func (c Config) HasGroup(g string) bool { return slices.Contains(c.MCP.EnabledToolGroups, g) }
