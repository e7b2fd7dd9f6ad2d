package ideconfig

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlDoc is a YAML file (Goose's config.yaml) edited as text: yaml.v3
// gives the line of each key, and an entry is written or removed as its
// own lines under the servers key, so that every other byte (comments,
// other keys, their order and layout) stays as it was. The result is read
// back before it is written.
type yamlDoc struct {
	data []byte
	root *yaml.Node // the top mapping; nil for an empty file
}

func parseYAML(data []byte) (*yamlDoc, error) {
	d := &yamlDoc{data: data}
	if i := bytes.IndexByte(data, '\r'); i >= 0 && (i+1 == len(data) || data[i+1] != '\n') {
		return nil, fmt.Errorf("invalid YAML: a carriage return that ends no line (offset %d): save the file with \\n or \\r\\n line ends", i)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return d, nil
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return d, nil
	case root.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("the file is not a mapping of keys (line %d)", root.Line)
	}
	d.root = root
	return d, nil
}

func (d *yamlDoc) bytes() []byte { return d.data }

// member returns the key and value nodes of key in mapping m.
func member(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil {
		return nil, nil
	}
	for i := len(m.Content) - 2; i >= 0; i -= 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func (d *yamlDoc) servers(path []string) ([]string, map[string]any, error) {
	_, v := member(d.root, path[0])
	if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		return nil, nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%q (line %d) is not a mapping", path[0], v.Line)
	}
	var names []string
	out := map[string]any{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		var x any
		if err := v.Content[i+1].Decode(&x); err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %v", path[0], v.Content[i].Value, err)
		}
		name := v.Content[i].Value
		if _, dup := out[name]; !dup {
			names = append(names, name)
		}
		out[name] = x
	}
	return names, out, nil
}

// lineStart is the offset of line (1-based) in data.
func lineStart(data []byte, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// backOverComments moves off (a line start) back over the comment and
// blank lines right above it, not past floor.
func backOverComments(data []byte, off, floor int) int {
	for off > floor {
		prev := bytes.LastIndexByte(data[:off-1], '\n') + 1
		t := bytes.TrimSpace(data[prev:off])
		if len(t) > 0 && t[0] != '#' {
			break
		}
		off = prev
	}
	return off
}

// blockEnd is where the lines of the key k end: at the first line after
// it, not blank nor a comment, indented no more than k (YAML's block
// rule), less the comment and blank lines before that line.
func (d *yamlDoc) blockEnd(k *yaml.Node) int {
	start := lineStart(d.data, k.Line)
	off := lineStart(d.data, k.Line+1)
	for off < len(d.data) {
		next := bytes.IndexByte(d.data[off:], '\n')
		line := d.data[off:]
		if next >= 0 {
			line = d.data[off : off+next]
		}
		t := bytes.TrimLeft(line, " ")
		if len(bytes.TrimSpace(t)) > 0 && t[0] != '#' && len(line)-len(t) < k.Column {
			break
		}
		if next < 0 {
			off = len(d.data)
			break
		}
		off += next + 1
	}
	return backOverComments(d.data, off, start+1)
}

func (d *yamlDoc) set(path []string, name string, value object) error {
	key := path[0]
	k, v := member(d.root, key)
	out := slices.Clone(d.data)
	switch {
	case d.root != nil && d.root.Style&yaml.FlowStyle != 0:
		return fmt.Errorf("the file's keys are written inline ({...}): write them one a line and run again")
	case k == nil:
		top := ""
		if d.root != nil && len(d.root.Content) > 0 {
			top = strings.Repeat(" ", d.root.Content[0].Column-1)
		}
		text := top + key + ":\n" + renderYAMLEntry(name, value, top+"  ", "  ")
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, text...)
	case (v.Kind == yaml.ScalarNode && v.Tag == "!!null") || (v.Kind == yaml.MappingNode && len(v.Content) == 0):
		// "extensions:" or "extensions: {}": the key's line becomes the block.
		ind := strings.Repeat(" ", k.Column-1)
		start := lineStart(out, k.Line)
		end := lineStart(out, k.Line+1)
		if v.Line > k.Line {
			end = lineStart(out, v.Line+1)
		}
		text := ind + key + ":\n" + renderYAMLEntry(name, value, ind+"  ", "  ")
		out = slices.Replace(out, start, min(end, len(out)), []byte(text)...)
	case v.Kind != yaml.MappingNode || v.Style&yaml.FlowStyle != 0:
		return fmt.Errorf("%q (line %d) is not written as a block of keys: write it so (one key a line) and run again", key, k.Line)
	default:
		first := v.Content[0]
		ind := strings.Repeat(" ", first.Column-1)
		step := "  "
		if f := v.Content[1]; f.Kind == yaml.MappingNode && len(f.Content) > 0 && f.Content[0].Column > first.Column {
			step = strings.Repeat(" ", f.Content[0].Column-first.Column)
		}
		text := renderYAMLEntry(name, value, ind, step)
		at, end := -1, -1
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == name {
				at, end = lineStart(out, v.Content[i].Line), d.blockEnd(v.Content[i])
			}
		}
		if at < 0 {
			at = d.blockEnd(v.Content[len(v.Content)-2])
			end = at
			if at > 0 && out[at-1] != '\n' {
				text = "\n" + text
			}
		}
		out = slices.Replace(out, at, end, []byte(text)...)
	}
	if err := verify(formatYAML, d.data, out, path, map[string]object{name: value}); err != nil {
		return err
	}
	nd, err := parseYAML(out)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	*d = *nd
	return nil
}

func (d *yamlDoc) remove(path []string, name string) error {
	_, v := member(d.root, path[0])
	if v == nil || v.Kind != yaml.MappingNode {
		return nil
	}
	if v.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("%q (line %d) is written inline: Berth moves entries of a block", path[0], v.Line)
	}
	out := slices.Clone(d.data)
	for i := len(v.Content) - 2; i >= 0; i -= 2 {
		if v.Content[i].Value != name {
			continue
		}
		start := lineStart(out, v.Content[i].Line)
		floor := 0
		if i > 0 {
			floor = lineStart(out, v.Content[i-2].Line) + 1
		}
		out = slices.Delete(out, backOverComments(out, start, floor), d.blockEnd(v.Content[i]))
	}
	nd, err := parseYAML(out)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	*d = *nd
	return nil
}

// renderYAMLEntry writes name: value as a block, its key indented by ind
// and each level by step more.
func renderYAMLEntry(name string, value object, ind, step string) string {
	var b strings.Builder
	b.WriteString(ind + yamlScalar(name) + ":\n")
	for _, f := range value {
		in := ind + step
		switch v := f.Value.(type) {
		case []string:
			if len(v) == 0 {
				fmt.Fprintf(&b, "%s%s: []\n", in, f.Key)
				continue
			}
			fmt.Fprintf(&b, "%s%s:\n", in, f.Key)
			for _, s := range v {
				fmt.Fprintf(&b, "%s%s- %s\n", in, step, yamlScalar(s))
			}
		case map[string]string:
			if len(v) == 0 {
				fmt.Fprintf(&b, "%s%s: {}\n", in, f.Key)
				continue
			}
			fmt.Fprintf(&b, "%s%s:\n", in, f.Key)
			for _, k := range sortedKeys(v) {
				fmt.Fprintf(&b, "%s%s%s: %s\n", in, step, yamlScalar(k), yamlScalar(v[k]))
			}
		case string:
			fmt.Fprintf(&b, "%s%s: %s\n", in, f.Key, yamlScalar(v))
		default:
			fmt.Fprintf(&b, "%s%s: %v\n", in, f.Key, v)
		}
	}
	return b.String()
}

// yamlScalar is s as a YAML string: plain when YAML reads it back as
// that string, else double-quoted (JSON's escapes are YAML's).
func yamlScalar(s string) string {
	if s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, "\n\t\"'#:{}[],&*!|>%@`\\") {
		var tagged yaml.Node
		if yaml.Unmarshal([]byte(s), &tagged) == nil && len(tagged.Content) == 1 && tagged.Content[0].Tag == "!!str" && tagged.Content[0].Value == s {
			return s
		}
	}
	return tomlString(s)
}
