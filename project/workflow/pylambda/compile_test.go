package pylambda

import (
	"strings"
	"testing"
)

func TestCallMatchesPython(t *testing.T) {
	cases := []struct {
		src    string
		args   []any
		kwargs map[string]any
		want   bool
	}{
		{"lambda x: x > 0", []any{42.0}, nil, true},
		{"lambda x: x > 0", []any{0.0}, nil, false},
		{"lambda x, min_val: x >= min_val", []any{5.0}, map[string]any{"min_val": 10}, false},
		{"lambda x, patterns: any(p in x for p in patterns)", []any{"all tests pass"}, map[string]any{"patterns": []any{"fail", "pass"}}, true},
		{"lambda x, patterns: all(p in x for p in patterns)", []any{"all tests pass"}, map[string]any{"patterns": []any{"fail", "pass"}}, false},
		{"lambda x, pattern: re.match(pattern, x) is not None", []any{"2025-10-07-name"}, map[string]any{"pattern": `\d{4}-\d{2}-\d{2}-`}, true},
		{"lambda x, pattern: re.match(pattern, x) is not None", []any{"name-2025"}, map[string]any{"pattern": `\d{4}`}, false},
		{"lambda x: re.search('(?i)ERROR', x) is None", []any{"no problems"}, nil, true},
		{"lambda x, required_keys: set(required_keys).issubset(set(x.keys()))", []any{map[string]any{"a": 1.0, "b": 2.0}}, map[string]any{"required_keys": []any{"a"}}, true},
		{"lambda x: yaml.safe_load(x) is not None", []any{"a: 1\nb: [2, 3]\n"}, nil, true},
		{"lambda x: yaml.safe_load(x) is not None", []any{""}, nil, false},
		{"lambda x: isinstance(x, list) and len(x) > 0", []any{[]any{"a"}}, nil, true},
		{"lambda x: isinstance(x, (int, float))", []any{"7"}, nil, false},
		{"lambda x: sum(x) == 6 and round(2.5) == 2", []any{[]any{1.0, 2.0, 3.0}}, nil, true},
		{"lambda x: 'success' in x.lower() or '✅' in x", []any{"Build SUCCESS"}, nil, true},
		{"lambda e: not e.get('reproduced') or len(e.get('failing_test', '')) > 0", []any{map[string]any{"reproduced": true, "failing_test": ""}}, nil, false},
		{"lambda e: e.get('frs', 0) >= e.get('goals', 0)", []any{map[string]any{"frs": 3.0, "goals": 2.0}}, nil, true},
		{"lambda x: x is True", []any{true}, nil, true},
		{`lambda x: "is not" in x`, []any{"this is not it"}, nil, true},
	}
	for _, c := range cases {
		f, err := Compile(c.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.src, err)
			continue
		}
		got, err := f.Call(c.args, c.kwargs)
		if err != nil {
			t.Errorf("%q(%v, %v): %v", c.src, c.args, c.kwargs, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q(%v, %v) = %v, want %v", c.src, c.args, c.kwargs, got, c.want)
		}
	}
}

func TestCallErrorsAreFailures(t *testing.T) {
	cases := []struct{ src, want string }{
		{"lambda e: e['a'] > 1", "key"},
		{"lambda x: len(x) > 0", "len"},
		{"lambda x: [i for i in range(100000000)]", "too many steps"},
		{"lambda x: re.match('(?<=a)b', x)", "RE2"},
	}
	for _, c := range cases {
		f, err := Compile(c.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		ok, err := f.Call([]any{map[string]any{}}, nil)
		if c.src == "lambda x: len(x) > 0" {
			ok, err = f.Call([]any{5.0}, nil)
		}
		if c.src == "lambda x: re.match('(?<=a)b', x)" {
			ok, err = f.Call([]any{"ab"}, nil)
		}
		if ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: ok %v err %v, want an error containing %q", c.src, ok, err, c.want)
		}
	}
}

func TestCompileRefusesWithTheFix(t *testing.T) {
	cases := []struct{ src, want string }{
		{"", "empty"},
		{"x > 0", "not a lambda"},
		{"lambda x, a, b: a <= x <= b", "write a <= x and x <= b"},
		{"lambda x: open('/etc/passwd')", "undefined: open"},
		{"lambda x: __import__('os')", "undefined"},
		{"lambda x: f'{x}'", "does not compile"},
		{"lambda x: (", "does not compile"},
		{"lambda_value", "does not compile"},
	}
	for _, c := range cases {
		_, err := Compile(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%q) = %v, want an error containing %q", c.src, err, c.want)
		}
	}
}

func TestParams(t *testing.T) {
	f, err := Compile("lambda x, min_len: len(x) >= min_len")
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Params(); len(p) != 2 || p[0] != "x" || p[1] != "min_len" {
		t.Fatalf("Params = %v", p)
	}
}

func TestTranslate(t *testing.T) {
	cases := map[string]string{
		"lambda x: x is not None":                   "lambda x: x != None",
		"lambda x: x is None":                       "lambda x: x == None",
		"lambda x: any(p in x for p in ['is'])":     "lambda x: any([p in x for p in ['is']])",
		"lambda x: max((len(p) for p in x))":        "lambda x: max(([len(p) for p in x]))",
		"lambda x, y: f(x, [a for a in y])":         "lambda x, y: f(x, [a for a in y])",
		`lambda x: "a is b" in x and r'(x for' > x`: `lambda x: "a is b" in x and r'(x for' > x`,
		"lambda x: '''is''' is x":                   "lambda x: '''is''' == x",
	}
	for in, want := range cases {
		if got := translate(in); got != want {
			t.Errorf("translate(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCompileAndCall(f *testing.F) {
	for _, s := range []string{"lambda x: x > 0", "lambda e: e.get('a') is not None", "lambda x: any(p in x for p in 'ab')", "lambda x: '''", "lambda x: (((", "lambda x: re.match(x, x)"} {
		f.Add(s, "ab")
	}
	f.Fuzz(func(t *testing.T, src, arg string) {
		fn, err := Compile(src)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		_, _ = fn.Call([]any{arg}, nil)
	})
}

func TestRequired(t *testing.T) {
	cases := map[string][]string{
		"lambda x: x":                        nil,
		"lambda x, a, b=2: x":                {"a"},
		"lambda x, *rest, k, **kw: x":        {"k"},
		"lambda x, low, high: low < x":       {"low", "high"},
		"lambda x, *, only=1, needed: x > 0": {"needed"},
	}
	for src, want := range cases {
		f, err := Compile(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got := f.Required(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("Required(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestDefaultsMustBeConstants: a default is computed where the gate is
// loaded, outside the child that runs lambdas under limits, so only
// constants are allowed.
func TestDefaultsMustBeConstants(t *testing.T) {
	for _, ok := range []string{"lambda x, minimum=1: x >= minimum", "lambda x, s='a', n=-2, f=None, b=True: True"} {
		if _, err := Compile(ok); err != nil {
			t.Errorf("Compile(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"lambda x, d=[0] * 500000000: True", "lambda x, n=len('abc'): True", "lambda x, d={}: True"} {
		if _, err := Compile(bad); err == nil || !strings.Contains(err.Error(), "is not a constant") {
			t.Errorf("Compile(%q) = %v, want a refusal", bad, err)
		}
	}
}
