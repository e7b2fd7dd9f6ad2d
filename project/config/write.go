package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// NamedServer is a server definition to add to a config file, with a
// comment to put above it ("" for none).
type NamedServer struct {
	Name    string
	Server  Server
	Comment string
}

// AddServers returns data, a YAML config file (a project's config.yaml or
// the broker's), with servers added under its servers: section. Every
// line it does not add stays as it was, comments and blank lines included:
// the new entries are inserted as text after the section's last entry
// (or as a new section at the end of the file), indented as the section
// is. Only a servers: section written on one line ({...}) that is not
// empty is rewritten through yaml.v3, which keeps comments but not all
// formatting. The result is checked against s: if it would not load, it
// is an error and nothing is returned.
func AddServers(file string, data []byte, servers []NamedServer, s *Schema) ([]byte, error) {
	if len(servers) == 0 {
		return data, nil
	}
	doc, err := ParseFile(file, data)
	if err != nil {
		return nil, err
	}
	var out []byte
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	switch key, val := topKey(root, "servers"); {
	case root.Kind == 0 || root.Kind == yaml.DocumentNode || isNull(root):
		out = appendSection(data, servers)
	case root.Kind != yaml.MappingNode:
		return nil, &Error{File: file, Line: root.Line, Column: root.Column, Msg: "the file must hold keys, not " + describe(root)}
	case root.Style&yaml.FlowStyle != 0: // the whole file on one line: written again
		root.Style = 0
		if key == nil {
			val = &yaml.Node{Kind: yaml.MappingNode}
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "servers"}, val)
		}
		if out, err = reencode(doc, val, servers); err != nil {
			return nil, &Error{File: file, Msg: err.Error()}
		}
	case key == nil:
		out = appendSection(data, servers)
	case isNull(val) || (val.Kind == yaml.MappingNode && val.Style&yaml.FlowStyle != 0 && len(val.Content) == 0):
		out = replaceEmptyValue(data, key, val, servers)
	case val.Kind == yaml.MappingNode && val.Style&yaml.FlowStyle == 0:
		out = insertEntries(data, root, key, val, servers)
	default:
		if out, err = reencode(doc, val, servers); err != nil {
			return nil, &Error{File: file, Msg: err.Error()}
		}
	}
	if err := checkData(file, out, s, servers); err != nil {
		return nil, fmt.Errorf("the servers could not be added without breaking the file (%v): add them by hand", err)
	}
	return out, nil
}

// checkData parses data and checks it against s, servers included, and
// that it declares want as they are.
func checkData(file string, data []byte, s *Schema, want []NamedServer) error {
	doc, err := ParseFile(file, data)
	if err != nil {
		return err
	}
	if err := Check(file, doc, s); err != nil {
		return err
	}
	got, err := LoadServers(file, doc)
	if err != nil {
		return err
	}
	for _, ns := range want {
		g, ok := got[ns.Name]
		if !ok || g.Digest() != ns.Server.Digest() || g.IsEnabled() != ns.Server.IsEnabled() {
			return fmt.Errorf("server %q does not read back as written", ns.Name)
		}
	}
	return nil
}

// topKey returns the key and value nodes of key in the mapping root.
func topKey(root *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if root.Kind != yaml.MappingNode {
		return nil, nil
	}
	var k, v *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			k, v = root.Content[i], root.Content[i+1]
		}
	}
	return k, v
}

// entriesYAML is servers as block YAML entries, every line indented by indent.
func entriesYAML(servers []NamedServer, indent string) []byte {
	var b bytes.Buffer
	for _, ns := range servers {
		if ns.Comment != "" {
			fmt.Fprintf(&b, "%s# %s\n", indent, ns.Comment)
		}
		fmt.Fprintf(&b, "%s%s:\n", indent, yamlKey(ns.Name))
		for _, line := range strings.Split(strings.TrimRight(string(serverYAML(ns.Server)), "\n"), "\n") {
			fmt.Fprintf(&b, "%s  %s\n", indent, line)
		}
	}
	return b.Bytes()
}

// serverYAML is one definition's fields as block YAML (only those set).
func serverYAML(s Server) []byte {
	out := struct {
		Command string            `yaml:"command,omitempty"`
		Args    []string          `yaml:"args,omitempty,flow"`
		Env     map[string]string `yaml:"env,omitempty"`
		Cwd     string            `yaml:"cwd,omitempty"`
		URL     string            `yaml:"url,omitempty"`
		Enabled *bool             `yaml:"enabled,omitempty"`
	}{s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Enabled}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(out) // strings, lists and maps of strings: cannot fail
	_ = enc.Close()
	return b.Bytes()
}

func yamlKey(name string) string {
	raw, _ := yaml.Marshal(name)
	return strings.TrimRight(string(raw), "\n")
}

// appendSection adds a servers: section at the end of data.
func appendSection(data []byte, servers []NamedServer) []byte {
	out := slices.Clone(data)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, '\n')
	}
	out = append(out, "servers:\n"...)
	return append(out, entriesYAML(servers, "  ")...)
}

// replaceEmptyValue turns `servers:` or `servers: {}` into a section
// holding servers.
func replaceEmptyValue(data []byte, key, val *yaml.Node, servers []NamedServer) []byte {
	lines := splitLines(data)
	li := key.Line - 1
	line := lines[li]
	keyIndent := strings.Repeat(" ", key.Column-1)
	head := line
	if val.Line == key.Line && !isNull(val) {
		head = line[:val.Column-1] // drop the {} (a comment after it goes with it)
	} else if i := strings.Index(line, "#"); i >= 0 && !isNull(val) {
		head = line[:i]
	}
	newLine := strings.TrimRight(head, " \t")
	if isNull(val) {
		newLine = strings.TrimRight(line, "\r\n")
	}
	repl := newLine + "\n" + string(entriesYAML(servers, keyIndent+"  "))
	return joinLines(lines[:li], repl, lines[li+1:])
}

// insertEntries adds servers as text after the last line of the block
// mapping val (the value of key in root).
func insertEntries(data []byte, root, key, val *yaml.Node, servers []NamedServer) []byte {
	lines := splitLines(data)
	// The section ends before the next top-level key, or at the end.
	end := len(lines)
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Line > key.Line && k.Line-1 < end {
			end = k.Line - 1
		}
	}
	// Back over blank lines and comments at the end of the section (those
	// above the next key belong to it).
	for end > key.Line && isBlankOrComment(lines[end-1]) {
		end--
	}
	indent := strings.Repeat(" ", key.Column+1)
	if len(val.Content) > 0 {
		indent = strings.Repeat(" ", val.Content[0].Column-1)
	}
	return joinLines(lines[:end], string(entriesYAML(servers, indent)), lines[end:])
}

// reencode adds servers to val's mapping and writes the whole document
// again with yaml.v3 (comments are kept).
func reencode(doc, val *yaml.Node, servers []NamedServer) ([]byte, error) {
	val.Style = 0
	for _, ns := range servers {
		var n yaml.Node
		if err := yaml.Unmarshal(serverYAML(ns.Server), &n); err != nil {
			return nil, err
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Value: ns.Name, HeadComment: ns.Comment}
		val.Content = append(val.Content, k, n.Content[0])
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// splitLines splits data after each newline (the last line may lack one).
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// joinLines is before, then middle, then after, with a newline ending
// every line before middle.
func joinLines(before []string, middle string, after []string) []byte {
	var b strings.Builder
	for _, l := range before {
		b.WriteString(l)
	}
	if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(middle)
	for _, l := range after {
		b.WriteString(l)
	}
	return []byte(b.String())
}

// ProjectSchema is the form of a project's config file.
func ProjectSchema() *Schema { return projectSchema }
