package pylambda

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
	"go.yaml.in/yaml/v3"
)

// predeclared is what a lambda may name besides Starlark's universe; it is
// frozen once and shared by every lambda.
var predeclared = func() starlark.StringDict {
	d := starlark.StringDict{
		"isinstance": starlark.NewBuiltin("isinstance", isinstance),
		"sum":        starlark.NewBuiltin("sum", sum),
		"round":      starlark.NewBuiltin("round", round),
		"re":         reModule,
		"yaml": &starlarkstruct.Module{Name: "yaml", Members: starlark.StringDict{
			"safe_load": starlark.NewBuiltin("yaml.safe_load", yamlSafeLoad),
		}},
	}
	d.Freeze()
	return d
}()

// pyTypes maps the built-ins a Python isinstance names to Starlark types.
var pyTypes = map[string][]string{
	"str": {"string"}, "int": {"int", "bool"}, "float": {"float"}, "bool": {"bool"},
	"list": {"list"}, "dict": {"dict"}, "tuple": {"tuple"}, "set": {"set"},
}

// isinstance(value, type_or_tuple) for the built-in types.
func isinstance(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v, t starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &v, &t); err != nil {
		return nil, err
	}
	types := starlark.Tuple{t}
	if tup, ok := t.(starlark.Tuple); ok {
		types = tup
	}
	for _, ty := range types {
		bi, ok := ty.(*starlark.Builtin)
		names, known := pyTypes[bi.Name()]
		if !ok || !known {
			return nil, fmt.Errorf("isinstance: %s is not a built-in type (use str, int, float, bool, list, dict, tuple or set)", ty)
		}
		for _, n := range names {
			if v.Type() == n {
				return starlark.True, nil
			}
		}
	}
	return starlark.False, nil
}

// sum(iterable, start=0) over ints and floats.
func sum(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "iterable", &it, "start?", &acc); err != nil {
		return nil, err
	}
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		v, err := starlark.Binary(syntax.PLUS, acc, x)
		if err != nil {
			return nil, fmt.Errorf("sum: %w", err)
		}
		acc = v
	}
	return acc, nil
}

// round(number, ndigits=None), rounding half to even as Python does.
func round(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("round: %s is not a number", x.Type())
	}
	if nd == starlark.None {
		return starlark.MakeInt64(int64(math.RoundToEven(f))), nil
	}
	n, err := starlark.AsInt32(nd)
	if err != nil {
		return nil, fmt.Errorf("round: ndigits: %w", err)
	}
	p := math.Pow(10, float64(n))
	return starlark.Float(math.RoundToEven(f*p) / p), nil
}

// yaml.safe_load(text): the document as Starlark values (None when empty).
func yamlSafeLoad(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("yaml.safe_load: %w", err)
	}
	return toStarlark(v)
}
