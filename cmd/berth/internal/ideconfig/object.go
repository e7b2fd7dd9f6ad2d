package ideconfig

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// field is one key of an app's server entry.
type field struct {
	Key   string
	Value any // string, bool, int, []string, map[string]string or object
}

// object is a server entry in an app's dialect, its keys in the order the
// app's documentation writes them: every format writes it in that order.
type object []field

// MarshalJSON writes the keys in order (maps, as encoding/json does, by key).
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshalNoEscape(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// plain is o as the generic values a JSON, TOML or YAML decoder returns
// (map[string]any, []any, string, bool, int64 as float64 for JSON): what
// the written file must read back as.
func (o object) plain() map[string]any {
	out := map[string]any{}
	for _, f := range o {
		out[f.Key] = plainValue(f.Value)
	}
	return out
}

func plainValue(v any) any {
	switch v := v.(type) {
	case object:
		return v.plain()
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case map[string]string:
		out := map[string]any{}
		for k, s := range v {
			out[k] = s
		}
		return out
	case int:
		return float64(v)
	}
	return v
}

// sortedKeys returns m's keys in order, so that files come out the same
// every time.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// normalize makes a decoded value comparable with plain: numbers as
// float64, and the maps and slices of every decoder as map[string]any and
// []any.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}
