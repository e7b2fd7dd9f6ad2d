package ideconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

// verify reads data again as the app's format and checks that the object
// at path holds want under name (nil: holds no entry name): Berth never
// writes a file the app would read otherwise than intended.
func verify(f format, data []byte, path []string, name string, want object) error {
	d, err := parseDoc(f, data)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	_, got, err := d.servers(path)
	if err != nil {
		return fmt.Errorf("the result would not read (%v)", err)
	}
	plain, err := decodePlain(f, data)
	if err != nil {
		return fmt.Errorf("the result would not parse (%v)", err)
	}
	at := any(plain)
	for _, k := range path {
		m, _ := at.(map[string]any)
		at = m[k]
	}
	servers, _ := at.(map[string]any)
	g, ok := servers[name]
	switch {
	case want == nil && ok:
		return fmt.Errorf("the result would still declare %q", name)
	case want == nil:
		return nil
	case !ok || !reflect.DeepEqual(normalize(g), normalize(want.plain())) || !reflect.DeepEqual(normalize(got[name]), normalize(want.plain())):
		return fmt.Errorf("the result would not read as the entry intended under %s", strings.Join(append(path, name), "."))
	}
	return nil
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
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		if v == nil {
			return out, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("the file is not a mapping of keys")
		}
		out = m
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
