package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Kind is the form a configuration value must have.
type Kind int

// The kinds of values.
const (
	KindSection  Kind = iota // a mapping of fixed keys (Schema.Keys)
	KindMap                  // a mapping of names the user chooses, each value of Schema.Entry
	KindString               // one value; numbers and booleans are read as their text
	KindInt                  // a whole number
	KindBool                 // true or false
	KindDuration             // a Go duration with its unit: 300ms, 30s, 5m, 1h
	KindStrings              // a list of values
)

// Schema describes a configuration key: the form of its value and, for a
// section or a map, what it holds. Check walks a file against it.
type Schema struct {
	Kind    Kind
	Example string             // a value of the right form, for the hint ("5m", "4242")
	Keys    map[string]*Schema // KindSection: its keys
	Entry   *Schema            // KindMap: every entry's value
	// Ignored keys are read by another program (praxis-os) and accepted
	// without effect.
	Ignored bool
}

// Form is what a value of kind k must look like, for messages: "a
// duration", "a whole number".
func (k Kind) Form() string {
	switch k {
	case KindSection, KindMap:
		return "a section of keys"
	case KindInt:
		return "a whole number"
	case KindBool:
		return "true or false"
	case KindDuration:
		return "a duration"
	case KindStrings:
		return "a list"
	default:
		return "a single value"
	}
}

// Hint says how to write a value of kind k, with example (a default) when
// it is not "": "use a Go duration such as 5m".
func (k Kind) Hint(example string) string {
	switch k {
	case KindDuration:
		if example == "" || example == "0s" {
			example = "5m"
		}
		return "use a Go duration such as " + example + " (units ns, us, ms, s, m, h)"
	case KindInt:
		if example == "" {
			example = "10"
		}
		return "use a whole number such as " + example
	case KindBool:
		return "use true or false"
	case KindStrings:
		if example == "" {
			example = "[a, b]"
		}
		return "use a list such as " + example
	case KindSection, KindMap:
		if example == "" {
			return "use indented keys below it"
		}
		return "use indented keys below it, such as " + example
	default:
		if example == "" {
			return "use one value, not a list or a section"
		}
		return "use one value such as " + example
	}
}

// FormError is the message for a value of the wrong form: it names where
// the value was set (a key, a variable, a flag), the value and the form to
// use, e.g. `mount_grace: "5 minutes" is not a duration: use a Go
// duration such as 5m`.
func FormError(name, value string, k Kind, example string) string {
	return fmt.Sprintf("%s: %q is not %s: %s", name, value, k.Form(), k.Hint(example))
}

// ParseDuration reads a duration the way configuration files must write
// it: a Go duration with a unit ("0" alone is allowed).
func ParseDuration(s string) (time.Duration, error) {
	return time.ParseDuration(strings.TrimSpace(s))
}

// Check walks doc, a parsed YAML (or JSON) document, against s: every key
// must be one s knows (else an *Error naming it and the closest known key)
// and every value of its key's form (else an *Error naming the key, the
// value and the form). Positions are doc's lines and columns.
func Check(file string, doc *yaml.Node, s *Schema) error {
	if doc == nil || doc.Kind == 0 {
		return nil // an empty file
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		doc = doc.Content[0]
	}
	if isNull(doc) {
		return nil // a file of only comments
	}
	c := checker{file: file, root: s}
	return c.check("", doc, s)
}

type checker struct {
	file string
	root *Schema
}

func (c checker) errorAt(n *yaml.Node, format string, a ...any) error {
	return &Error{File: c.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, a...)}
}

func (c checker) check(key string, n *yaml.Node, s *Schema) error {
	n = resolveAlias(n)
	name := key
	if name == "" {
		name = "the file"
	}
	if isNull(n) && key != "" && (s.Kind == KindSection || s.Kind == KindMap || s.Kind == KindStrings || s.Kind == KindString) {
		return nil // empty: the default
	}
	switch s.Kind {
	case KindSection, KindMap:
		if n.Kind != yaml.MappingNode {
			if key == "" {
				return c.errorAt(n, "the file must hold keys (such as %s), not %s", exampleKey(s), describe(n))
			}
			return c.errorAt(n, "%s is %s, not a section: %s", key, describe(n), s.Kind.Hint(s.Example))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := resolveAlias(n.Content[i]), n.Content[i+1]
			if kn.Kind != yaml.ScalarNode {
				return c.errorAt(kn, "%s: a key must be a name, not %s", name, describe(kn))
			}
			child := join(key, kn.Value)
			sub := s.Entry
			if s.Kind == KindSection {
				sub = s.Keys[kn.Value]
				if sub == nil {
					return c.errorAt(kn, "unknown key %q%s", child, c.suggest(key, kn.Value, s))
				}
			}
			if err := c.check(child, vn, sub); err != nil {
				return err
			}
		}
		return nil
	case KindStrings:
		if n.Kind != yaml.SequenceNode {
			return c.errorAt(n, "%s: %s is not a list: %s", key, quoted(n), s.Kind.Hint(s.Example))
		}
		for _, e := range n.Content {
			e = resolveAlias(e)
			if e.Kind != yaml.ScalarNode || isNull(e) {
				return c.errorAt(e, "%s: each entry must be one value, not %s: %s", key, describe(e), s.Kind.Hint(s.Example))
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return c.errorAt(n, "%s is %s: %s", key, describe(n), s.Kind.Hint(s.Example))
	}
	switch s.Kind {
	case KindInt:
		if n.Tag != "!!int" {
			return c.errorAt(n, "%s", FormError(key, n.Value, s.Kind, s.Example))
		}
	case KindBool:
		if n.Tag != "!!bool" {
			return c.errorAt(n, "%s", FormError(key, n.Value, s.Kind, s.Example))
		}
	case KindDuration:
		if _, err := ParseDuration(n.Value); err != nil || isNull(n) {
			return c.errorAt(n, "%s", FormError(key, n.Value, s.Kind, s.Example))
		}
	}
	return nil
}

// suggest is " (did you mean X?)" for an unknown key name under section,
// looking at the section's keys first, then at every key of the file (a
// key put at the wrong level), else the list of the section's keys.
func (c checker) suggest(section, name string, s *Schema) string {
	keys := slices.Sorted(maps.Keys(s.Keys))
	if m := Closest(name, keys); m != "" {
		return ": did you mean " + strconvQuote(join(section, m)) + "?"
	}
	all := allKeys("", c.root)
	for _, k := range all {
		if strings.HasSuffix(k, "."+name) {
			return ": did you mean " + strconvQuote(k) + "? (it belongs under " + strings.TrimSuffix(k, "."+name) + ")"
		}
	}
	if m := Closest(join(section, name), all); m != "" {
		return ": did you mean " + strconvQuote(m) + "?"
	}
	var known []string
	for _, k := range keys {
		if !s.Keys[k].Ignored {
			known = append(known, k)
		}
	}
	where := "here"
	if section != "" {
		where = "under " + section
	}
	return " (the keys " + where + " are " + strings.Join(known, ", ") + ")"
}

// allKeys lists the dotted names of every key under s (sections too, not
// the entries of maps).
func allKeys(prefix string, s *Schema) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(s.Keys)) {
		sub := s.Keys[k]
		if sub.Ignored {
			continue
		}
		out = append(out, join(prefix, k))
		if sub.Kind == KindSection {
			out = append(out, allKeys(join(prefix, k), sub)...)
		}
	}
	return out
}

func exampleKey(s *Schema) string {
	for _, k := range allKeys("", s) {
		return k
	}
	return "a key"
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// describe names what a node is, for messages: "a list", "empty".
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a section"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "empty"
	default:
		return quoted(n)
	}
}

func quoted(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return describe(n)
	}
	return strconvQuote(n.Value)
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
