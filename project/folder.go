package project

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A folder (Options.Folder) is a directory in no project: it has no
// .praxis-os/, so no config file, no standards and no workflows. Its
// engine reads nothing of it and writes nothing into it: no watcher, no
// index, no workflow engine. Its server offers what needs none of them
// (get_server_info, current_date, get_recent_logs, the broker's hosted
// servers of the user) and, under the names of the standards and workflow
// tools, answers that say how to start using .praxis-os/.

// folderConfig is a folder's settings: the defaults, with no tool group
// and no servers of its own.
func folderConfig() config.Config {
	cfg := config.Default()
	cfg.MCP.EnabledToolGroups = []string{}
	return cfg
}

// folderTools are the tools a folder answers with how to start using
// .praxis-os/, and what each says is missing.
var folderTools = []struct{ name, title, missing string }{
	{search.ToolName, "Search project standards (none in this folder)", "no standards to search"},
	{workflow.ToolListWorkflows, "List workflows (none in this folder)", "no workflows"},
	{workflow.ToolStartWorkflow, "Start a workflow (none in this folder)", "no workflows to start"},
}

// anyArguments is the input schema of the folder's tools: they read no
// argument, so whatever a client sends for the project's tools is taken.
var anyArguments = json.RawMessage(`{"type":"object","additionalProperties":true}`)

// addFolderTools registers folderTools on s.
func addFolderTools(s *mcp.Server, root string) {
	for _, t := range folderTools {
		text := folderHint(root, t.missing)
		s.AddTool(&mcp.Tool{
			Name:        t.name,
			Title:       t.title,
			Description: fmt.Sprintf("This folder has no %s/ folder: %s. The answer says how to add them.", config.Dir, t.missing),
			InputSchema: anyArguments,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
}

// folderHint says what a folder lacks and how to start using .praxis-os/.
func folderHint(root, missing string) string {
	dir := filepath.Join(root, config.Dir)
	return fmt.Sprintf("%s has no %s/ folder, so Berth serves it as a plain folder: %s. "+
		"To start using %s here, create %s with Markdown standards in %s and workflows in %s "+
		"(`berth demo` shows a complete example): within a second Berth serves the folder as a project, "+
		"with standards search and workflows (if the IDE's list of tools does not change, restart Berth's MCP server in the IDE).",
		root, config.Dir, missing, config.Dir, dir, filepath.Join(dir, "standards"), filepath.Join(dir, "workflows"))
}

// kind is what get_server_info says the engine serves: "project" or
// "folder" (api.KindProject, api.KindFolder: project does not import api).
func (e *Engine) kind() string {
	if e.folder {
		return "folder"
	}
	return "project"
}
