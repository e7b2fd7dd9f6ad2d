package pylambda

import (
	"fmt"
	"math"
	"sort"

	"go.starlark.net/starlark"
)

// maxDepth bounds the nesting of a value handed to a lambda.
const maxDepth = 64

// toStarlark converts a decoded JSON or YAML value (nil, bool, numbers,
// strings, lists and maps) to a Starlark value. A whole float64, as JSON
// decodes every number, becomes an int, as Python's json module reads it.
func toStarlark(v any) (starlark.Value, error) { return convert(v, 0) }

func convert(v any, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return starlark.MakeInt64(int64(x)), nil
		}
		return starlark.Float(x), nil
	case float32:
		return convert(float64(x), depth)
	case int:
		return starlark.MakeInt(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case uint64:
		return starlark.MakeUint64(x), nil
	case []any:
		elems := make([]starlark.Value, 0, len(x))
		for _, e := range x {
			sv, err := convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			elems = append(elems, sv)
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := starlark.NewDict(len(x))
		for _, k := range keys {
			sv, err := convert(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = e
		}
		return convert(m, depth)
	}
	return nil, fmt.Errorf("cannot pass a %T to a lambda", v)
}
