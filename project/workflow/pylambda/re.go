package pylambda

import (
	"fmt"
	"regexp"

	"github.com/berth-dev/berth/project/workflow/pattern"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Python re flags, as numbers so that flags=re.I | re.M works.
const (
	reIgnoreCase = 2
	reMultiline  = 8
	reDotAll     = 16
)

// reModule is Python's re, on Go's RE2 syntax.
var reModule = &starlarkstruct.Module{Name: "re", Members: starlark.StringDict{
	"match":      starlark.NewBuiltin("re.match", reFind(func(re *regexp.Regexp, s string) []int { return anchored(re, s, false) })),
	"fullmatch":  starlark.NewBuiltin("re.fullmatch", reFind(func(re *regexp.Regexp, s string) []int { return anchored(re, s, true) })),
	"search":     starlark.NewBuiltin("re.search", reFind(func(re *regexp.Regexp, s string) []int { return re.FindStringSubmatchIndex(s) })),
	"findall":    starlark.NewBuiltin("re.findall", reFindAll),
	"sub":        starlark.NewBuiltin("re.sub", reSub),
	"I":          starlark.MakeInt(reIgnoreCase),
	"IGNORECASE": starlark.MakeInt(reIgnoreCase),
	"M":          starlark.MakeInt(reMultiline),
	"MULTILINE":  starlark.MakeInt(reMultiline),
	"S":          starlark.MakeInt(reDotAll),
	"DOTALL":     starlark.MakeInt(reDotAll),
}}

// compileRE compiles a pattern with Python's flags, within the bounds of
// package pattern.
func compileRE(src string, flags int) (*pattern.Pattern, error) {
	prefix := ""
	if flags&reIgnoreCase != 0 {
		prefix += "i"
	}
	if flags&reMultiline != 0 {
		prefix += "m"
	}
	if flags&reDotAll != 0 {
		prefix += "s"
	}
	if prefix != "" {
		src = "(?" + prefix + ")" + src
	}
	return pattern.Compile(src)
}

// anchored finds a match starting at 0 (and ending at len(s) when full).
func anchored(re *regexp.Regexp, s string, full bool) []int {
	expr := `^(?:` + re.String() + `)`
	if full {
		expr += `$`
	}
	a, err := regexp.Compile(expr)
	if err != nil {
		return nil
	}
	return a.FindStringSubmatchIndex(s)
}

// unpackRE reads (pattern, string, flags?) and refuses a match that would
// cost more than package pattern allows.
func unpackRE(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*regexp.Regexp, string, error) {
	var src, s string
	flags := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &src, "string", &s, "flags?", &flags); err != nil {
		return nil, "", err
	}
	p, err := compileRE(src, flags)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", b.Name(), err)
	}
	if err := p.Allow(len(s)); err != nil {
		return nil, "", fmt.Errorf("%s: %w", b.Name(), err)
	}
	return p.Regexp(), s, nil
}

func reFind(find func(*regexp.Regexp, string) []int) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		re, s, err := unpackRE(b, args, kwargs)
		if err != nil {
			return nil, err
		}
		loc := find(re, s)
		if loc == nil {
			return starlark.None, nil
		}
		return &match{s: s, loc: loc}, nil
	}
}

func reFindAll(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	re, s, err := unpackRE(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	var out []starlark.Value
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		switch len(m) {
		case 1:
			out = append(out, starlark.String(m[0]))
		case 2:
			out = append(out, starlark.String(m[1]))
		default:
			groups := make(starlark.Tuple, 0, len(m)-1)
			for _, g := range m[1:] {
				groups = append(groups, starlark.String(g))
			}
			out = append(out, groups)
		}
	}
	return starlark.NewList(out), nil
}

func reSub(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var src, repl, s string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &src, "repl", &repl, "string", &s); err != nil {
		return nil, err
	}
	p, err := compileRE(src, 0)
	if err == nil {
		err = p.Allow(len(s))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.String(p.Regexp().ReplaceAllLiteralString(s, repl)), nil
}

// match is a Python re match: true, with group(n) and groups().
type match struct {
	s   string
	loc []int
}

var _ starlark.HasAttrs = (*match)(nil)

func (m *match) String() string        { return fmt.Sprintf("<re.Match %q>", m.group(0)) }
func (m *match) Type() string          { return "re.Match" }
func (m *match) Freeze()               {}
func (m *match) Truth() starlark.Bool  { return true }
func (m *match) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: re.Match") }
func (m *match) AttrNames() []string   { return []string{"group", "groups"} }

func (m *match) group(i int) starlark.Value {
	if i < 0 || 2*i+1 >= len(m.loc) || m.loc[2*i] < 0 {
		return starlark.None
	}
	return starlark.String(m.s[m.loc[2*i]:m.loc[2*i+1]])
}

func (m *match) Attr(name string) (starlark.Value, error) {
	switch name {
	case "group":
		return starlark.NewBuiltin("group", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			i := 0
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0, &i); err != nil {
				return nil, err
			}
			return m.group(i), nil
		}), nil
	case "groups":
		return starlark.NewBuiltin("groups", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			var out starlark.Tuple
			for i := 1; 2*i < len(m.loc); i++ {
				out = append(out, m.group(i))
			}
			return out, nil
		}), nil
	}
	return nil, nil
}
