package project

import "strings"

// GroupMetaKey is the key of a tool's _meta, in tools/list answers, that
// names the tool's group: a tool group of mcp.enabled_tool_groups (rag,
// workflow, pos), "always" for the tools every project has, or the name
// of the hosted server a <server>__<tool> comes from. `berth tools`
// shows it.
const GroupMetaKey = "dev.berth/group"

// GroupAlways is the group of the tools every project offers.
const GroupAlways = "always"

// toolGroup is tool's group from the groups the engine registered.
func toolGroup(groups map[string]string, tool string) string {
	if g, ok := groups[tool]; ok {
		return g
	}
	if server, _, ok := strings.Cut(tool, "__"); ok {
		return server
	}
	return GroupAlways
}
