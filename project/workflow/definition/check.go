package definition

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/pylambda"
)

// Result is the outcome of checking evidence against a gate, before the
// gate's strictness is applied: Errors are what a strict gate blocks on.
type Result struct {
	Errors        []string `json:"errors"`
	Warnings      []string `json:"warnings"`
	FieldsMissing []string `json:"fields_missing"`
}

// OK reports whether the evidence had no errors.
func (r Result) OK() bool { return len(r.Errors) == 0 }

// Lambdas runs a gate's lambdas (package lambdaproc runs them in a child
// process under limits). A nil Lambdas fails every lambda check, saying so.
type Lambdas interface {
	Run(ctx context.Context, b pylambda.Batch) (lambdaproc.Result, error)
}

// Check checks evidence (a decoded JSON object) against the gate: required
// fields, types, the declarative checks, each field's validator and the
// cross-field rules. Fields the schema does not name are warnings. The
// declarative checks run here; the lambdas run together, through run. The
// slices of the result are never nil. The error is ctx's, when it ended
// before the check did.
func (g *Gate) Check(ctx context.Context, evidence map[string]any, run Lambdas) (Result, error) {
	r := Result{Errors: []string{}, Warnings: []string{}, FieldsMissing: []string{}}
	var calls lambdaCalls
	known := make(map[string]bool, len(g.Fields))
	for i := range g.Fields {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		f := &g.Fields[i]
		known[f.Name] = true
		v, present := evidence[f.Name]
		if !present || v == nil {
			if f.Required {
				r.FieldsMissing = append(r.FieldsMissing, f.Name)
				msg := fmt.Sprintf("missing required field %q (%s)", f.Name, f.Type)
				if f.Description != "" {
					msg += ": " + f.Description
				}
				r.Errors = append(r.Errors, msg)
			}
			continue
		}
		v, _ = normalizeScalar(v)
		if !hasType(v, f.Type) {
			r.Errors = append(r.Errors, fmt.Sprintf("field %q must be %s %s, got %s", f.Name, article(f.Type), f.Type, describe(v)))
			continue
		}
		r.Errors = append(r.Errors, f.checks(v)...)
		r.Warnings = append(r.Warnings, g.addValidator(&calls, f, len(r.Errors))...)
	}
	g.addRules(&calls, len(r.Errors))
	errs, err := calls.run(ctx, evidence, run)
	if err != nil {
		return Result{}, err
	}
	r.Errors = merge(r.Errors, errs)
	if len(g.Fields) > 0 {
		var extra []string
		for k := range evidence {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		for _, k := range extra {
			r.Warnings = append(r.Warnings, fmt.Sprintf("field %q is not in the evidence schema: stored, not checked", k))
		}
	}
	return r, nil
}

// checks runs the declarative checks on a value already of the field's type.
func (f *Field) checks(v any) []string {
	var errs []string
	if n, ok := v.(float64); ok {
		if f.Min != nil && n < *f.Min {
			errs = append(errs, fmt.Sprintf("field %q is %v, below the minimum %v", f.Name, n, *f.Min))
		}
		if f.Max != nil && n > *f.Max {
			errs = append(errs, fmt.Sprintf("field %q is %v, above the maximum %v", f.Name, n, *f.Max))
		}
	}
	if f.MinLength != nil {
		if l := length(v); l < *f.MinLength {
			errs = append(errs, fmt.Sprintf("field %q has length %d, below the minimum length %d", f.Name, l, *f.MinLength))
		}
	}
	if f.re != nil {
		if s, ok := v.(string); ok {
			switch match, err := f.re.MatchString(s); {
			case err != nil:
				errs = append(errs, fmt.Sprintf("field %q is not checked against its pattern: %v", f.Name, err))
			case !match:
				errs = append(errs, fmt.Sprintf("field %q does not match the pattern %s", f.Name, f.Pattern))
			}
		}
	}
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, v) {
		errs = append(errs, fmt.Sprintf("field %q must be one of %s, got %s", f.Name, jsonText(f.Enum), jsonText(v)))
	}
	if len(f.MustInclude) > 0 {
		errs = append(errs, f.checkIncludes(v)...)
	}
	if len(f.MustConfirm) > 0 {
		errs = append(errs, f.checkConfirms(v)...)
	}
	return errs
}

// normalizeScalar turns every Go number into float64 so that YAML enums and
// JSON evidence compare equal; ok is false for values that are not scalars.
func normalizeScalar(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return v, false
		}
		return f, true
	}
	return v, false
}

// hasType reports whether a normalized value is of the gate type.
func hasType(v any, typ string) bool {
	switch typ {
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeInteger:
		n, ok := v.(float64)
		return ok && n == math.Trunc(n) && !math.IsInf(n, 0)
	case TypeNumber:
		_, ok := v.(float64)
		return ok
	case TypeString:
		_, ok := v.(string)
		return ok
	case TypeObject:
		_, ok := v.(map[string]any)
		return ok
	case TypeList:
		_, ok := v.([]any)
		return ok
	case TypeAny:
		return true
	}
	return false
}

func length(v any) int {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x)
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

func describe(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

func article(typ string) string {
	if typ == TypeInteger || typ == TypeObject {
		return "an"
	}
	return "a"
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
