package definition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/pylambda"
	"go.yaml.in/yaml/v3"
)

const maxLambdas = 1000

// parseValidators compiles the validators mapping (name: "lambda x: ...").
func (g *Gate) parseValidators(n *yaml.Node) error {
	if n.Kind == 0 || n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: validators must be a mapping of name to a lambda such as \"lambda x: x > 0\"", n.Line)
	}
	if len(n.Content)/2 > maxLambdas {
		return fmt.Errorf("validators has %d entries; at most %d are allowed", len(n.Content)/2, maxLambdas)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: validators.%s must be a lambda written as text, such as \"lambda x: x > 0\"", v.Line, name)
		}
		fn, err := pylambda.Compile(v.Value)
		if err != nil {
			return fmt.Errorf("line %d: validators.%s: %w", v.Line, name, err)
		}
		if len(fn.Params()) == 0 {
			return fmt.Errorf("line %d: validators.%s takes no parameter; a validator is called with the field's value first (lambda x: ...)", v.Line, name)
		}
		g.Validators = append(g.Validators, Validator{Name: name, Lambda: v.Value, fn: fn})
	}
	return nil
}

// validator returns the named validator, or nil.
func (g *Gate) validator(name string) *Validator {
	for i := range g.Validators {
		if g.Validators[i].Name == name {
			return &g.Validators[i]
		}
	}
	return nil
}

// bindValidators checks each field's validator_params against its lambda's
// parameters. A field naming a validator that is not defined is a warning
// (praxis-os warns too); the field is then checked for its type only.
func (g *Gate) bindValidators() ([]string, error) {
	var warns []string
	for _, f := range g.Fields {
		if f.Validator == "" {
			if len(f.ValidatorParams) > 0 {
				warns = append(warns, fmt.Sprintf("evidence field %q has validator_params but no validator: they are unused", f.Name))
			}
			continue
		}
		v := g.validator(f.Validator)
		if v == nil {
			warns = append(warns, fmt.Sprintf("evidence field %q names validator %q, which validators does not define: the field is checked for its type only", f.Name, f.Validator))
			continue
		}
		params := v.fn.Params()
		for k := range f.ValidatorParams {
			if !slices.Contains(params[1:], k) && !v.fn.TakesKwargs() {
				return nil, fmt.Errorf("evidence field %q: validator_params.%s is not a parameter of validators.%s (%s)", f.Name, k, v.Name, v.Lambda)
			}
		}
		for _, req := range v.fn.Required() {
			if _, ok := f.ValidatorParams[req]; !ok {
				return nil, fmt.Errorf("evidence field %q: validators.%s needs %s: add it under validator_params", f.Name, v.Name, req)
			}
		}
	}
	return warns, nil
}

// parseRules compiles cross_field_validation: a list of {rule, error_message}.
func (g *Gate) parseRules(n *yaml.Node) error {
	if n.Kind == 0 || n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: cross_field_validation must be a list of {rule, error_message}", n.Line)
	}
	if len(n.Content) > maxLambdas {
		return fmt.Errorf("cross_field_validation has %d rules; at most %d are allowed", len(n.Content), maxLambdas)
	}
	for i, item := range n.Content {
		var raw struct {
			Rule         string `yaml:"rule"`
			ErrorMessage string `yaml:"error_message"`
		}
		if item.Kind != yaml.MappingNode || item.Decode(&raw) != nil || strings.TrimSpace(raw.Rule) == "" {
			return fmt.Errorf("line %d: cross_field_validation[%d] must be {rule: \"lambda e: ...\", error_message: \"...\"}", item.Line, i)
		}
		fn, err := pylambda.Compile(raw.Rule)
		if err != nil {
			return fmt.Errorf("line %d: cross_field_validation[%d]: %w", item.Line, i, err)
		}
		if len(fn.Params()) == 0 || len(fn.Required()) > 0 {
			return fmt.Errorf("line %d: cross_field_validation[%d] must take one parameter, the evidence (lambda e: ...)", item.Line, i)
		}
		if raw.ErrorMessage == "" {
			raw.ErrorMessage = "rule " + raw.Rule + " does not hold"
		}
		g.Rules = append(g.Rules, Rule{Rule: raw.Rule, ErrorMessage: raw.ErrorMessage, fn: fn})
	}
	return nil
}

// lambdaCalls are the lambda calls of one check, made together after the
// declarative checks: each knows where in the list of errors its own goes.
type lambdaCalls struct {
	batch pylambda.Batch
	// at is, for each call, the index in the check's errors before which
	// its error goes; what describes the failure of each.
	at   []int
	what []func(pylambda.Outcome) string
}

// add queues a call of lambda src (by its text) whose error goes at the
// index at, described by what (which returns "" when the outcome passes).
func (c *lambdaCalls) add(src, field string, kwargs map[string]any, at int, what func(pylambda.Outcome) string) {
	i := slices.Index(c.batch.Lambdas, src)
	if i < 0 {
		i = len(c.batch.Lambdas)
		c.batch.Lambdas = append(c.batch.Lambdas, src)
	}
	c.batch.Calls = append(c.batch.Calls, pylambda.Call{Lambda: i, Field: field, Kwargs: kwargs})
	c.at = append(c.at, at)
	c.what = append(c.what, what)
}

// run makes the calls through run and returns each failed call's error
// with the index it goes at. A batch that cannot be run fails each call
// with the reason.
func (c *lambdaCalls) run(ctx context.Context, evidence map[string]any, run Lambdas) ([]placed, error) {
	if len(c.batch.Calls) == 0 {
		return nil, nil
	}
	c.batch.Evidence = evidence
	outcomes := make([]pylambda.Outcome, len(c.batch.Calls))
	var err error
	var res lambdaproc.Result
	if run == nil {
		err = errors.New("this engine has no process to run gate lambdas in")
	} else if res, err = run.Run(ctx, c.batch); err == nil {
		outcomes = res.Outcomes
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var out []placed
	for i := range c.batch.Calls {
		o := pylambda.Outcome{}
		switch {
		case err != nil:
			o.Err = "not run: " + err.Error()
		case i < len(outcomes):
			o = outcomes[i]
		default:
			o.Err = "no outcome"
		}
		if msg := c.what[i](o); msg != "" {
			out = append(out, placed{at: c.at[i], msg: msg})
		}
	}
	return out, nil
}

// placed is an error and the index in the check's errors it goes at.
type placed struct {
	at  int
	msg string
}

// merge inserts each placed error before the error at its index (in order).
func merge(errs []string, extra []placed) []string {
	if len(extra) == 0 {
		return errs
	}
	out := make([]string, 0, len(errs)+len(extra))
	j := 0
	for i := 0; i <= len(errs); i++ {
		for j < len(extra) && extra[j].at == i {
			out = append(out, extra[j].msg)
			j++
		}
		if i < len(errs) {
			out = append(out, errs[i])
		}
	}
	return out
}

// addValidator queues a present, well-typed field's validator; its error
// goes at index at. A validator the gate does not define is a warning.
func (g *Gate) addValidator(c *lambdaCalls, f *Field, at int) []string {
	if f.Validator == "" {
		return nil
	}
	val := g.validator(f.Validator)
	if val == nil {
		return []string{fmt.Sprintf("field %q names validator %q, which the gate does not define: checked for its type only", f.Name, f.Validator)}
	}
	c.add(val.Lambda, f.Name, f.ValidatorParams, at, func(o pylambda.Outcome) string {
		switch {
		case o.Err != "":
			return fmt.Sprintf("validator %q failed for field %q: %s", f.Validator, f.Name, o.Err)
		case !o.OK:
			return fmt.Sprintf("validator %q failed for field %q (%s)", f.Validator, f.Name, val.Lambda)
		}
		return ""
	})
	return nil
}

// addRules queues the cross-field rules, each given the whole evidence;
// their errors go at index at (after the fields').
func (g *Gate) addRules(c *lambdaCalls, at int) {
	for i, r := range g.Rules {
		c.add(r.Rule, "", nil, at, func(o pylambda.Outcome) string {
			switch {
			case o.Err != "":
				return fmt.Sprintf("cross-field rule %d (%s) could not be evaluated: %s", i, r.ErrorMessage, o.Err)
			case !o.OK:
				return "cross-field validation failed: " + r.ErrorMessage
			}
			return ""
		})
	}
}
