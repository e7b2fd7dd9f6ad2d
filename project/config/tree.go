package config

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"
)

// projectSchema is the form of a project's config.yaml and config.json.
var projectSchema = &Schema{Kind: KindSection, Keys: map[string]*Schema{
	"mcp": {Kind: KindSection, Example: "{http_port: 4300}", Keys: map[string]*Schema{
		"http_port":           {Kind: KindInt, Example: "4242"},
		"enabled_tool_groups": {Kind: KindStrings, Example: "[rag, workflow]"},
		"max_tools_warning":   {Kind: KindInt, Example: "20"},
		"max_sessions":        {Kind: KindInt, Example: "10"},
		"max_tool_calls":      {Kind: KindInt, Example: "16"},
		"tools_listing":       {Kind: KindString, Example: "auto"},
		"finder_threshold":    {Kind: KindInt, Example: "40"},
		// praxis-os's own server settings: Berth binds loopback and serves /mcp.
		"http_host": {Kind: KindString, Ignored: true},
		"http_path": {Kind: KindString, Ignored: true},
	}},
	"rag": {Kind: KindSection, Example: "{standards_path: docs/standards}", Keys: map[string]*Schema{
		"standards_path": {Kind: KindString, Example: ".praxis-os/standards"},
		"usage_path":     {Kind: KindString, Example: ".praxis-os/usage"},
		"workflows_path": {Kind: KindString, Example: ".praxis-os/workflows"},
		"allow_outside":  {Kind: KindStrings, Example: "[../team-standards]"},
		// praxis-os's vector index: Berth keeps its index in berth.db.
		"index_path":         {Kind: KindString, Ignored: true},
		"embedding_provider": {Kind: KindString, Ignored: true},
	}},
	"finder": {Kind: KindSection, Example: "{promote: true}", Keys: map[string]*Schema{
		"promote":                  {Kind: KindBool, Example: "true"},
		"clients_with_tool_search": {Kind: KindStrings, Example: "[claude-code]"},
	}},
	"servers": ServersSchema,
}}

// findKey returns the value node of a dotted key in doc, or nil.
func findKey(doc *yaml.Node, key string) *yaml.Node {
	n := doc
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, part := range strings.Split(key, ".") {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				next = n.Content[i+1] // the last of duplicate keys, as decoding takes
			}
		}
		n = next
	}
	return n
}

// placeError places a keyError at its key's line and column in file;
// other errors are placed at the file.
func placeError(file string, doc *yaml.Node, err error) error {
	var ke *keyError
	if !errors.As(err, &ke) {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return &Error{File: file, Msg: err.Error()}
	}
	out := &Error{File: file, Msg: ke.msg}
	if n := findKey(doc, ke.key); n != nil {
		out.Line, out.Column = n.Line, n.Column
	}
	return out
}

// dropNulls removes the keys of n's mappings whose value is empty (null),
// so that they keep their defaults when decoded.
func dropNulls(n *yaml.Node) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			dropNulls(c)
		}
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isNull(n.Content[i+1]) {
				continue
			}
			dropNulls(n.Content[i+1])
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
	}
}
