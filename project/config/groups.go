package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Groups lists the tool groups Berth serves.
var Groups = []string{GroupRAG, GroupWorkflow, GroupPOS}

// praxisOnlyGroups are tool groups praxis-os offers and Berth does not
// serve: a praxis-os config that enables them loads, with a warning.
var praxisOnlyGroups = map[string]string{
	"browser": "praxis-os's browser tools (Playwright)",
}

// checkGroups keeps in mcp.enabled_tool_groups only the groups Berth
// serves; every other name is a warning, never a refusal: a group
// praxis-os knows (browser) says Berth does not serve it, an unknown one
// names the closest known group.
func (c *Config) checkGroups(doc *yaml.Node) {
	at := ""
	if n := findKey(doc, "mcp.enabled_tool_groups"); n != nil {
		at = fmt.Sprintf("%s:%d:%d: ", c.File, n.Line, n.Column)
	}
	var served []string
	for _, g := range c.MCP.EnabledToolGroups {
		switch what, praxis := praxisOnlyGroups[g]; {
		case slices.Contains(Groups, g):
			if !slices.Contains(served, g) {
				served = append(served, g)
			}
		case praxis:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%smcp.enabled_tool_groups: %q is %s, which Berth does not serve: its tools are not offered (Berth serves %s)",
				at, g, what, strings.Join(Groups, ", ")))
		default:
			hint := ""
			if m := Closest(g, append(slices.Clone(Groups), slices.Sorted(maps.Keys(praxisOnlyGroups))...)); m != "" {
				hint = fmt.Sprintf("did you mean %q? ", m)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%smcp.enabled_tool_groups: unknown group %q is ignored (%sBerth serves %s)",
				at, g, hint, strings.Join(Groups, ", ")))
		}
	}
	c.MCP.EnabledToolGroups = served
}
