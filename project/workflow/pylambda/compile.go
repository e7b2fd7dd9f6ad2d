package pylambda

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Limits on one lambda.
const (
	maxSourceBytes = 8 << 10
	// maxSteps bounds one call (Starlark counts executed instructions).
	maxSteps = 200_000
)

// fileOptions is the Starlark dialect: sets allowed, no statements.
var fileOptions = &syntax.FileOptions{Set: true}

// Func is one compiled lambda. It is safe for concurrent use.
type Func struct {
	src string
	fn  *starlark.Function
}

// Compile reads src, a Python lambda expression ("lambda x: x > 0"). The
// error says what is wrong and how to write it instead.
func Compile(src string) (*Func, error) {
	src = strings.TrimSpace(src)
	switch {
	case src == "":
		return nil, errors.New("the lambda is empty (write it as lambda x: <condition>)")
	case len(src) > maxSourceBytes:
		return nil, fmt.Errorf("the lambda is %d bytes; at most %d are allowed", len(src), maxSourceBytes)
	case !strings.HasPrefix(src, "lambda"):
		return nil, fmt.Errorf("%q is not a lambda (write it as lambda x: <condition>)", short(src))
	}
	expr := translate(src)
	if err := constantDefaults(expr); err != nil {
		return nil, fmt.Errorf("%q: %w", short(src), err)
	}
	th := newThread()
	v, err := starlark.EvalOptions(fileOptions, th, "lambda", expr, predeclared)
	if err != nil {
		return nil, fmt.Errorf("%q does not compile: %s%s", short(src), errText(err), hint(err))
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return nil, fmt.Errorf("%q is a %s, not a lambda", short(src), v.Type())
	}
	fn.Freeze()
	return &Func{src: src, fn: fn}, nil
}

// constantDefaults refuses a lambda whose parameter defaults are not
// constants: a default is computed when the lambda is compiled, which
// happens where gates are loaded, outside the process that runs lambdas
// under limits. A lambda that does not parse is left to the compiler's
// error.
func constantDefaults(expr string) error {
	e, err := fileOptions.ParseExpr("lambda", expr, 0)
	if err != nil {
		return nil
	}
	lam, ok := e.(*syntax.LambdaExpr)
	if !ok {
		return nil
	}
	for _, p := range lam.Params {
		bin, ok := p.(*syntax.BinaryExpr)
		if !ok || bin.Op != syntax.EQ || isConstant(bin.Y) {
			continue
		}
		name := "a parameter"
		if id, ok := bin.X.(*syntax.Ident); ok {
			name = id.Name
		}
		return fmt.Errorf("the default of %s is not a constant: write a number, a string, True, False or None (pass other values in validator_params)", name)
	}
	return nil
}

// isConstant reports a literal, -literal, True, False or None.
func isConstant(e syntax.Expr) bool {
	switch x := e.(type) {
	case *syntax.Literal:
		return true
	case *syntax.Ident:
		return x.Name == "True" || x.Name == "False" || x.Name == "None"
	case *syntax.UnaryExpr:
		_, lit := x.X.(*syntax.Literal)
		return lit && (x.Op == syntax.MINUS || x.Op == syntax.PLUS)
	case *syntax.ParenExpr:
		return isConstant(x.X)
	}
	return false
}

// String is the lambda's source.
func (f *Func) String() string { return f.src }

// Params names the lambda's parameters, in order.
func (f *Func) Params() []string {
	out := make([]string, f.fn.NumParams())
	for i := range out {
		out[i], _ = f.fn.Param(i)
	}
	return out
}

// Required names the parameters after the first that have no default: a
// validator's validator_params must give them.
func (f *Func) Required() []string {
	var out []string
	n := f.fn.NumParams()
	star := -1 // index of *args, if any
	if f.fn.HasVarargs() {
		star = n - boolInt(f.fn.HasKwargs()) - 1 // Starlark orders: positional, keyword-only, *args, **kwargs
	}
	for i := 1; i < n; i++ {
		if i == star || (f.fn.HasKwargs() && i == n-1) || f.fn.ParamDefault(i) != nil {
			continue
		}
		name, _ := f.fn.Param(i)
		out = append(out, name)
	}
	return out
}

// TakesKwargs reports a **kwargs parameter.
func (f *Func) TakesKwargs() bool { return f.fn.HasKwargs() }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Call calls the lambda with args and keyword args (decoded JSON or YAML
// values) and reports the truth of its result, as Python's bool() would.
// An error is a failure of the lambda (a missing key, a wrong type, the step
// budget spent), which praxis-os also counts as a failed check.
func (f *Func) Call(args []any, kwargs map[string]any) (bool, error) {
	sargs := make(starlark.Tuple, 0, len(args))
	for _, a := range args {
		v, err := toStarlark(a)
		if err != nil {
			return false, err
		}
		sargs = append(sargs, v)
	}
	var skw []starlark.Tuple
	for _, k := range sortedKeys(kwargs) {
		v, err := toStarlark(kwargs[k])
		if err != nil {
			return false, fmt.Errorf("%s: %w", k, err)
		}
		skw = append(skw, starlark.Tuple{starlark.String(k), v})
	}
	v, err := starlark.Call(newThread(), f.fn, sargs, skw)
	if err != nil {
		return false, errors.New(errText(err))
	}
	return bool(v.Truth()), nil
}

func newThread() *starlark.Thread {
	th := &starlark.Thread{Name: "lambda", Print: func(*starlark.Thread, string) {}}
	th.SetMaxExecutionSteps(maxSteps)
	return th
}

// errText is an error without Starlark's call stack.
func errText(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return ee.Msg
	}
	return err.Error()
}

// hint names the fix for the Python syntax Starlark refuses.
func hint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "does not associate"):
		return " (chained comparisons are not supported: write a <= x and x <= b)"
	case strings.Contains(msg, "undefined:"):
		return " (a lambda may use its parameters, the Starlark built-ins, isinstance, sum, round, re and yaml)"
	}
	return ""
}

func short(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:117]) + "..."
	}
	return s
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
