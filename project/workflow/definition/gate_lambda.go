package definition

import (
	"fmt"
	"slices"
	"strings"

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

// checkValidator runs a present, well-typed field's validator.
func (g *Gate) checkValidator(f *Field, v any) (errs, warns []string) {
	if f.Validator == "" {
		return nil, nil
	}
	val := g.validator(f.Validator)
	if val == nil {
		return nil, []string{fmt.Sprintf("field %q names validator %q, which the gate does not define: checked for its type only", f.Name, f.Validator)}
	}
	ok, err := val.fn.Call([]any{v}, f.ValidatorParams)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("validator %q failed for field %q: %v", f.Validator, f.Name, err)}, nil
	case !ok:
		return []string{fmt.Sprintf("validator %q failed for field %q (%s)", f.Validator, f.Name, val.Lambda)}, nil
	}
	return nil, nil
}

// checkRules runs the cross-field rules on the whole evidence.
func (g *Gate) checkRules(evidence map[string]any) []string {
	var errs []string
	for i, r := range g.Rules {
		ok, err := r.fn.Call([]any{evidence}, nil)
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("cross-field rule %d (%s) could not be evaluated: %v", i, r.ErrorMessage, err))
		case !ok:
			errs = append(errs, "cross-field validation failed: "+r.ErrorMessage)
		}
	}
	return errs
}
