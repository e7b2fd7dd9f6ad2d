package ideconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// document is an app's MCP file as its user wrote it: JSON with comments
// and trailing commas (JSONC, which VS Code and Cursor read), edited in
// place through hujson so that every byte Berth does not change stays as
// it was: comments, blank lines, indentation, key order, trailing commas.
type document struct {
	v    hujson.Value
	unit string // one level of indentation, as the file uses it
}

// parseDocument reads data, which must be one JSON object (comments and
// trailing commas allowed); blank data is an empty object.
func parseDocument(data []byte) (*document, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &document{v: hujson.Value{Value: &hujson.Object{}, AfterExtra: hujson.Extra("\n")}, unit: "  "}, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, syntaxError{strings.TrimPrefix(err.Error(), "hujson: ")}
	}
	if v.Value.Kind() != '{' {
		return nil, fmt.Errorf("the file is %s, not an object", kindName(v.Value.Kind()))
	}
	d := &document{v: v, unit: "  "}
	if ms := d.top().Members; len(ms) > 0 {
		if ind, ok := lineIndent(ms[0].Name.BeforeExtra); ok && ind != "" {
			d.unit = ind
		}
	}
	return d, nil
}

// syntaxError is a file that is not JSON even with comments and trailing
// commas; its text starts with the line and column.
type syntaxError struct{ msg string }

func (e syntaxError) Error() string { return "invalid JSON at " + e.msg }

func (d *document) top() *hujson.Object { return d.v.Value.(*hujson.Object) }

// bytes is the file's content, with Berth's changes.
func (d *document) bytes() []byte { return d.v.Pack() }

// find returns the index of the last member called name (the one apps
// read), or -1.
func find(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if memberName(obj.Members[i]) == name {
			return i
		}
	}
	return -1
}

func memberName(m hujson.ObjectMember) string {
	lit, _ := m.Name.Value.(hujson.Literal)
	return lit.String()
}

// object returns the object at path (keys from the top), or nil when a
// key on the way is missing; a value on the way that is not an object is
// an error.
func (d *document) object(path []string) (*hujson.Object, error) {
	obj := d.top()
	for depth, key := range path {
		i := find(obj, key)
		if i < 0 {
			return nil, nil
		}
		next, ok := obj.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("%q is %s, not an object", strings.Join(path[:depth+1], "."), kindName(obj.Members[i].Value.Value.Kind()))
		}
		obj = next
	}
	return obj, nil
}

// entries returns the members at path as standard JSON, in file order.
func (d *document) entries(path []string) ([]string, map[string]json.RawMessage, error) {
	obj, err := d.object(path)
	if err != nil || obj == nil {
		return nil, nil, err
	}
	var names []string
	raw := map[string]json.RawMessage{}
	for _, m := range obj.Members {
		v := m.Value.Clone()
		v.BeforeExtra, v.AfterExtra = nil, nil
		v.Standardize()
		name := memberName(m)
		if _, dup := raw[name]; !dup {
			names = append(names, name)
		}
		raw[name] = json.RawMessage(v.Pack())
	}
	return names, raw, nil
}

// set makes the member name of the object at path hold value (JSON): in
// place of the last member of that name (earlier ones are removed), else
// appended, in the file's own style (indented or on one line, trailing
// commas or not). Missing objects on the path are added.
func (d *document) set(path []string, name string, value []byte) error {
	if _, err := d.object(path); err != nil {
		return err
	}
	obj, outer := d.top(), ""
	for _, key := range path {
		line := d.memberIndent(obj, outer)
		if find(obj, key) < 0 {
			d.appendMember(obj, outer, key, []byte("{}"))
		}
		obj, outer = obj.Members[find(obj, key)].Value.Value.(*hujson.Object), line
	}
	for firstIndex(obj, name) != find(obj, name) {
		d.remove(path, firstIndex(obj, name)) // an earlier duplicate: apps read only the last
	}
	i := find(obj, name)
	if i < 0 {
		d.appendMember(obj, outer, name, value)
		return nil
	}
	m := &obj.Members[i]
	m.Value.Value = d.format(value, d.memberIndent(obj, outer), !d.compact(obj)).Value
	return nil
}

func firstIndex(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if memberName(m) == name {
			return i
		}
	}
	return -1
}

// remove deletes the i-th member of the object at path with the comments
// that belong to it (hujson moves the others).
func (d *document) remove(path []string, i int) {
	obj, _ := d.object(path)
	if obj == nil || i < 0 || i >= len(obj.Members) {
		return
	}
	ptr := ""
	for _, k := range append(slices.Clone(path), memberName(obj.Members[i])) {
		ptr += "/" + escapePointer(k)
	}
	if firstIndex(obj, memberName(obj.Members[i])) != i {
		// A JSON pointer names the first of duplicates: take the member out by hand.
		obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
		return
	}
	patch, _ := json.Marshal([]map[string]string{{"op": "remove", "path": ptr}})
	if err := d.v.Patch(patch); err != nil {
		obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	}
}

// removeNamed deletes every member called name of the object at path.
func (d *document) removeNamed(path []string, name string) {
	for {
		obj, _ := d.object(path)
		if obj == nil {
			return
		}
		i := find(obj, name)
		if i < 0 {
			return
		}
		d.remove(path, i)
	}
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// appendMember adds name: value as the last member of obj, whose own
// member line is indented by outer, in the style of its other members.
func (d *document) appendMember(obj *hujson.Object, outer, name string, value []byte) {
	indent := d.memberIndent(obj, outer)
	compact := d.compact(obj)
	before := "\n" + indent
	if compact {
		before = " "
		if len(obj.Members) == 0 {
			before = ""
		}
	}
	trailing := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	if len(obj.Members) > 0 && !compact {
		// A comment on the last member's line stays on that line.
		if i := bytes.IndexByte(obj.AfterExtra, '\n'); i >= 0 && bytes.Contains(obj.AfterExtra[:i], []byte("/")) {
			before = string(obj.AfterExtra[:i]) + before
			obj.AfterExtra = obj.AfterExtra[i:]
		}
	}
	if len(obj.Members) == 0 && !compact {
		// Comments between the braces stay above the new member.
		if c := bytes.TrimRight(obj.AfterExtra, " \t\r\n"); len(c) > 0 {
			before = string(c) + before
		}
		obj.AfterExtra = hujson.Extra("\n" + outer)
	}
	nameJSON, _ := json.Marshal(name)
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra(before), Value: hujson.Literal(nameJSON)},
		Value: d.format(value, indent, !compact),
	}
	m.Value.BeforeExtra = hujson.Extra(" ")
	if trailing {
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
}

// compact reports whether obj is written on one line (then a new member
// goes on that line too). An empty object is written out on lines.
func (d *document) compact(obj *hujson.Object) bool {
	if len(obj.Members) == 0 {
		return false
	}
	for _, m := range obj.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return false
		}
	}
	return !bytes.Contains(obj.AfterExtra, []byte("\n"))
}

// memberIndent is the indentation of obj's member lines: that of its
// last member, else outer and one more level.
func (d *document) memberIndent(obj *hujson.Object, outer string) string {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if ind, ok := lineIndent(obj.Members[i].Name.BeforeExtra); ok {
			return ind
		}
	}
	if obj == d.top() {
		return d.unit
	}
	return outer + d.unit
}

// format is value (JSON) as a hujson value: indented for a member line
// indented by indent, or on one line.
func (d *document) format(value []byte, indent string, multiline bool) hujson.Value {
	var b bytes.Buffer
	var err error
	if multiline {
		err = json.Indent(&b, value, indent, d.unit)
	} else {
		err = compactSpaced(&b, value)
	}
	if err != nil {
		b.Reset()
		b.Write(value)
	}
	v, err := hujson.Parse(b.Bytes())
	if err != nil { // value is JSON Berth made: cannot happen
		panic(fmt.Sprintf("ideconfig: format %s: %v", value, err))
	}
	return v
}

// compactSpaced writes JSON on one line with a space after each colon and
// comma, as people write short objects.
func compactSpaced(b *bytes.Buffer, value []byte) error {
	v, err := hujson.Parse(value)
	if err != nil {
		return err
	}
	v.Minimize()
	for val := range v.All() {
		if obj, ok := val.Value.(*hujson.Object); ok {
			for i := range obj.Members {
				obj.Members[i].Value.BeforeExtra = hujson.Extra(" ")
				if i > 0 {
					obj.Members[i].Name.BeforeExtra = hujson.Extra(" ")
				}
			}
		}
		if arr, ok := val.Value.(*hujson.Array); ok {
			for i := 1; i < len(arr.Elements); i++ {
				arr.Elements[i].BeforeExtra = hujson.Extra(" ")
			}
		}
	}
	b.Write(v.Pack())
	return nil
}

// lineIndent is the whitespace that begins the last line of extra, when
// extra holds a line break.
func lineIndent(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	return string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))]), true
}

func kindName(k hujson.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "not an object"
}
