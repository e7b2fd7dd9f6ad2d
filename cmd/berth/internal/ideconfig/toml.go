package ideconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc is a TOML file (Codex's config.toml) edited as text: go-toml's
// parser gives where each table and key starts, and an entry is written
// or removed as its own [servers.NAME] table, so that every other byte
// (comments, other tables, their order and layout) stays as it was.
// go-toml reads the result back before it is written.
type tomlDoc struct {
	data  []byte
	items []tomlItem
}

// tomlItem is one expression of the file: a table header, a key/value or
// a comment, with the offset of the start of its line.
type tomlItem struct {
	kind  unstable.Kind
	line  int
	table []string // the table it is in (the header's own path for a header)
	key   []string // a key/value's key, relative to table
}

func parseTOML(data []byte) (*tomlDoc, error) {
	var plain map[string]any
	if err := toml.Unmarshal(data, &plain); err != nil {
		return nil, tomlError(err)
	}
	d := &tomlDoc{data: data}
	p := unstable.Parser{KeepComments: true}
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		it := tomlItem{kind: e.Kind}
		off := int(e.Raw.Offset)
		if e.Kind != unstable.Comment {
			var key []string
			for k := e.Key(); k.Next(); {
				n := k.Node()
				if len(key) == 0 {
					off = int(n.Raw.Offset)
				}
				key = append(key, string(n.Data))
			}
			if e.Kind == unstable.KeyValue {
				it.key = key
			} else {
				table = key
			}
		}
		it.table = table
		it.line = bytes.LastIndexByte(data[:off], '\n') + 1
		d.items = append(d.items, it)
	}
	if err := p.Error(); err != nil {
		return nil, tomlError(err)
	}
	return d, nil
}

// tomlError is a TOML syntax error with its line and column.
func tomlError(err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return tomlSyntax{fmt.Sprintf("line %d, column %d: %s", row, col, de.Error())}
	}
	return fmt.Errorf("invalid TOML: %v", err)
}

// tomlSyntax is a file that is not TOML; its text starts with the line and column.
type tomlSyntax struct{ msg string }

func (e tomlSyntax) Error() string { return "invalid TOML at " + e.msg }

func (d *tomlDoc) bytes() []byte { return d.data }

func (d *tomlDoc) servers(path []string) ([]string, map[string]any, error) {
	plain, err := decodePlain(formatTOML, d.data)
	if err != nil {
		return nil, nil, err
	}
	raw, ok := plain[path[0]]
	if !ok {
		return nil, nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%q is not a table", path[0])
	}
	var names []string
	add := func(n string) {
		if _, ok := m[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, it := range d.items { // in file order
		switch {
		case it.kind != unstable.KeyValue && len(it.table) > 1 && it.table[0] == path[0]:
			add(it.table[1])
		case it.kind == unstable.KeyValue && len(it.table) == 1 && it.table[0] == path[0]:
			add(it.key[0])
		case it.kind == unstable.KeyValue && len(it.table) == 0 && len(it.key) > 1 && it.key[0] == path[0]:
			add(it.key[1])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(m)) {
		add(n)
	}
	out := map[string]any{}
	for _, n := range names {
		out[n] = m[n]
	}
	return names, out, nil
}

// inlineForm says why the entry name is not in a form this editor
// changes ("" when it is): written inline or with dotted keys.
func (d *tomlDoc) inlineForm(key, name string) string {
	for _, it := range d.items {
		switch {
		case it.kind == unstable.KeyValue && len(it.table) == 0 && it.key[0] == key && (len(it.key) == 1 || it.key[1] == name):
			return fmt.Sprintf("%s is written as keys of the file's top (%s = ...)", key, strings.Join(it.key, "."))
		case it.kind == unstable.KeyValue && slices.Equal(it.table, []string{key}) && it.key[0] == name:
			return fmt.Sprintf("server %q is written inline under [%s]", name, key)
		case it.kind == unstable.ArrayTable && it.table[0] == key:
			return fmt.Sprintf("%s is an array of tables ([[%s]])", key, key)
		}
	}
	return ""
}

// regions are the byte ranges of the tables of entry name ([key.name] and
// its sub-tables), from header to the line after the table's last
// key/value (trailing blank lines and comments after it stay outside).
func (d *tomlDoc) regions(key, name string) [][2]int {
	var out [][2]int
	for i, it := range d.items {
		if it.kind != unstable.Table || len(it.table) < 2 || it.table[0] != key || it.table[1] != name {
			continue
		}
		end := len(d.data)
		last := i
		for j := i + 1; j < len(d.items) && d.items[j].kind != unstable.Table && d.items[j].kind != unstable.ArrayTable; j++ {
			if d.items[j].kind == unstable.KeyValue {
				last = j
			}
		}
		if last+1 < len(d.items) {
			end = d.items[last+1].line
		}
		out = append(out, [2]int{it.line, trimBlankLines(d.data, it.line, end)})
	}
	return out
}

// trimBlankLines moves end back over the blank lines before it (not past start).
func trimBlankLines(data []byte, start, end int) int {
	for end > start {
		prev := bytes.LastIndexByte(data[:end-1], '\n') + 1
		if len(bytes.TrimSpace(data[prev:end])) > 0 {
			break
		}
		end = prev
	}
	return end
}

func (d *tomlDoc) set(path []string, name string, value object) error {
	key := path[0]
	if why := d.inlineForm(key, name); why != "" {
		return fmt.Errorf("%s: write server %q as a [%s.%s] table (or remove it) and run again", why, name, key, tomlKey(name))
	}
	text := renderTOMLTable(key, name, value)
	out := slices.Clone(d.data)
	if rs := d.regions(key, name); len(rs) > 0 {
		for i := len(rs) - 1; i >= 1; i-- { // a sub-table goes with the blank lines before it
			out = slices.Delete(out, max(rs[i-1][1], trimBlankLines(out, 0, rs[i][0])), rs[i][1])
		}
		out = slices.Replace(out, rs[0][0], rs[0][1], []byte(text)...)
	} else {
		at := len(out)
		for _, it := range d.items {
			if it.kind == unstable.Table && len(it.table) > 1 && it.table[0] == key {
				for _, r := range d.regions(key, it.table[1]) {
					at = r[1]
				}
			}
		}
		prefix := ""
		if at == len(out) {
			if len(out) > 0 && out[len(out)-1] != '\n' {
				prefix = "\n"
			}
			if len(bytes.TrimSpace(out)) > 0 {
				prefix += "\n"
			}
		} else {
			prefix = "\n"
		}
		out = slices.Insert(out, at, []byte(prefix+text)...)
	}
	if err := verify(formatTOML, d.data, out, path, map[string]object{name: value}); err != nil {
		return err
	}
	nd, err := parseTOML(out)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	*d = *nd
	return nil
}

func (d *tomlDoc) remove(path []string, name string) error {
	key := path[0]
	if why := d.inlineForm(key, name); why != "" {
		return fmt.Errorf("%s: Berth moves only [%s.NAME] tables", why, key)
	}
	out := slices.Clone(d.data)
	rs := d.regions(key, name)
	for i := len(rs) - 1; i >= 0; i-- {
		start, end := rs[i][0], rs[i][1]
		// Comment lines right above the header belong to it.
		for start > 0 {
			prev := bytes.LastIndexByte(out[:start-1], '\n') + 1
			if !bytes.HasPrefix(bytes.TrimSpace(out[prev:start]), []byte("#")) {
				break
			}
			start = prev
		}
		// So does one blank line after it.
		if nl := bytes.IndexByte(out[end:], '\n'); nl >= 0 && len(bytes.TrimSpace(out[end:end+nl])) == 0 {
			end += nl + 1
		}
		out = slices.Delete(out, start, end)
	}
	nd, err := parseTOML(out)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	*d = *nd
	return nil
}

// renderTOMLTable writes value as the table [key.name].
func renderTOMLTable(key, name string, value object) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\n", tomlKey(key), tomlKey(name))
	for _, f := range value {
		fmt.Fprintf(&b, "%s = %s\n", tomlKey(f.Key), tomlValue(f.Value))
	}
	return b.String()
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString is s as a TOML basic string: JSON's escapes are TOML's.
func tomlString(s string) string {
	b, _ := marshalNoEscape(s)
	return string(b)
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		if len(v) == 0 {
			return "{}"
		}
		var parts []string
		for _, k := range sortedKeys(v) {
			parts = append(parts, tomlKey(k)+" = "+tomlString(v[k]))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	b, _ := json.Marshal(v) // not reached: entries hold the kinds above
	return string(b)
}
