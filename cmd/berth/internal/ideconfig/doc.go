package ideconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// doc is an app's file being edited in place: every byte Berth does not
// change (comments, order, layout, other keys) stays as it was.
type doc interface {
	// servers returns the entries of the object at path, in file order,
	// as generic values.
	servers(path []string) ([]string, map[string]any, error)
	// set makes the entry name of the object at path hold value.
	set(path []string, name string, value object) error
	// remove deletes the entry name of the object at path; an entry in a
	// form it does not edit is an error saying so.
	remove(path []string, name string) error
	bytes() []byte
}

// parseDoc reads data in format f; blank data is an empty file.
func parseDoc(f format, data []byte) (doc, error) {
	switch f {
	case formatTOML:
		return parseTOML(data)
	case formatYAML:
		return parseYAML(data)
	}
	d, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	return jsonDoc{d}, nil
}

// jsonDoc is a JSON (JSONC) file.
type jsonDoc struct{ d *document }

func (j jsonDoc) servers(path []string) ([]string, map[string]any, error) {
	names, raw, err := j.d.entries(path)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]any{}
	for n, r := range raw {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, nil, err
		}
		out[n] = v
	}
	return names, out, nil
}

func (j jsonDoc) set(path []string, name string, value object) error {
	raw, err := value.MarshalJSON()
	if err != nil {
		return err
	}
	return j.d.set(path, name, raw)
}

func (j jsonDoc) remove(path []string, name string) error {
	j.d.removeNamed(path, name)
	return nil
}

func (j jsonDoc) bytes() []byte { return j.d.bytes() }

// verify reads after (an edit of before) again as the app's format and
// checks that the object at path holds each changed entry as wanted (nil:
// holds none of that name) and that everything else reads as it did:
// Berth never writes a file the app would read otherwise than intended.
func verify(f format, before, after []byte, path []string, changed map[string]object) error {
	d, err := parseDoc(f, after)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	_, got, err := d.servers(path)
	if err != nil {
		return fmt.Errorf("the result would not read (%v)", err)
	}
	was, err := decodePlain(f, before)
	if err != nil {
		return err
	}
	now, err := decodePlain(f, after)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	// Take the changed entries out of both; what is left must be equal.
	for i, tree := range []map[string]any{was, now} {
		at := any(tree)
		for _, k := range path {
			m, _ := at.(map[string]any)
			at = m[k]
		}
		servers, _ := at.(map[string]any)
		for name, want := range changed {
			g, ok := servers[name]
			switch {
			case i == 0:
			case want == nil && ok:
				return fmt.Errorf("the result would still declare %q", name)
			case want != nil && (!ok || !reflect.DeepEqual(normalize(g), normalize(want.plain())) || !reflect.DeepEqual(normalize(got[name]), normalize(want.plain()))):
				return fmt.Errorf("the result would not read as the entry intended under %s", strings.Join(append(slices.Clone(path), name), "."))
			}
			delete(servers, name)
		}
	}
	prune(was, path)
	prune(now, path)
	if !reflect.DeepEqual(normalize(was), normalize(now)) {
		return errors.New("the result would change other settings of the file")
	}
	return nil
}

// prune removes the objects along path that the edit emptied or made
// (an entry added to a file without servers adds its parents).
func prune(tree map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	v, present := tree[path[0]]
	if present && v == nil { // "extensions:" with nothing: null, then the entry's parent
		delete(tree, path[0])
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	prune(m, path[1:])
	if len(m) == 0 {
		delete(tree, path[0])
	}
}

// decodePlain reads data with a standard decoder of its format, as the
// app reads it: JSON with comments and trailing commas, TOML, YAML.
func decodePlain(f format, data []byte) (map[string]any, error) {
	out := map[string]any{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	switch f {
	case formatTOML:
		if err := toml.Unmarshal(data, &out); err != nil {
			return nil, err
		}
	case formatYAML:
		if err := yaml.Unmarshal(data, &out); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]any{}
		}
	default:
		std, err := hujson.Standardize(bytes.Clone(data)) // it works in place
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(std, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}
