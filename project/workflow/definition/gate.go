package definition

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/berth-dev/berth/project/workflow/pattern"
	"github.com/berth-dev/berth/project/workflow/pylambda"
	"go.yaml.in/yaml/v3"
)

// Evidence field types, as gate files name them.
const (
	TypeBoolean = "boolean"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeString  = "string"
	TypeObject  = "object"
	TypeList    = "list"
	// TypeAny accepts any value; a metadata checkpoint's fields have it.
	TypeAny = "any"
)

// typeAliases maps the spellings found in praxis-os gates to the canonical names.
var typeAliases = map[string]string{
	"boolean": TypeBoolean, "bool": TypeBoolean,
	"integer": TypeInteger, "int": TypeInteger,
	"number": TypeNumber, "float": TypeNumber,
	"string": TypeString, "str": TypeString,
	"object": TypeObject, "dict": TypeObject, "map": TypeObject,
	"list": TypeList, "array": TypeList,
	"any": TypeAny,
}

const maxGateFields = 1000

// Gate is a phase's checkpoint: how evidence is checked before the phase may
// be completed. The zero Gate is permissive (accepts any evidence).
type Gate struct {
	// Strict gates block on errors; others pass and report them as warnings.
	Strict bool `json:"strict"`
	// AllowOverride is kept from the gate file for display; Berth offers no override.
	AllowOverride bool `json:"allow_override"`
	// Fields are the evidence_schema entries, in file order.
	Fields []Field `json:"evidence_fields"`
	// Validators are the gate's named lambdas (validators:), which fields
	// name in their validator key.
	Validators []Validator `json:"validators,omitempty"`
	// Rules are the cross_field_validation lambdas, each given the whole evidence.
	Rules []Rule `json:"cross_field_rules,omitempty"`
	// Source is "yaml" for a gate file, "metadata" for a metadata
	// checkpoint, "dynamic" for a generated phase's validation gate, and
	// "permissive" when the phase has none.
	Source string `json:"source"`
}

// Validator is one entry of a gate's validators: a Python lambda.
type Validator struct {
	Name   string `json:"name"`
	Lambda string `json:"lambda"`
	fn     *pylambda.Func
}

// Rule is one cross_field_validation entry.
type Rule struct {
	Rule         string `json:"rule"`
	ErrorMessage string `json:"error_message"`
	fn           *pylambda.Func
}

// Field is one evidence_schema entry.
type Field struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Description string   `json:"description,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Enum        []any    `json:"enum,omitempty"`
	MinLength   *int     `json:"min_length,omitempty"`
	// Validator names an entry of the gate's validators, run on the value
	// with ValidatorParams as keyword arguments.
	Validator       string         `json:"validator,omitempty"`
	ValidatorParams map[string]any `json:"validator_params,omitempty"`
	// MustInclude lists values a list field must hold (a generated phase's
	// task ids).
	MustInclude []string `json:"must_include,omitempty"`
	// MustConfirm lists keys an object field must set to true (a generated
	// phase's validation gate criteria).
	MustConfirm []string `json:"must_confirm,omitempty"`

	re *pattern.Pattern
}

// Field returns the field named name.
func (g *Gate) Field(name string) (*Field, bool) {
	for i := range g.Fields {
		if g.Fields[i].Name == name {
			return &g.Fields[i], true
		}
	}
	return nil, false
}

// Permissive is the gate of a phase without a gate file.
func Permissive() *Gate {
	return &Gate{AllowOverride: true, Fields: []Field{}, Source: "permissive"}
}

type rawCheckpoint struct {
	Strict        *bool `yaml:"strict"`
	AllowOverride *bool `yaml:"allow_override"`
}

type rawGate struct {
	Checkpoint           *rawCheckpoint `yaml:"checkpoint"`
	EvidenceSchema       yaml.Node      `yaml:"evidence_schema"`
	Validators           yaml.Node      `yaml:"validators"`
	CrossFieldValidation yaml.Node      `yaml:"cross_field_validation"`
}

type rawField struct {
	Type            string         `yaml:"type"`
	Required        bool           `yaml:"required"`
	Description     string         `yaml:"description"`
	Validator       string         `yaml:"validator"`
	ValidatorParams map[string]any `yaml:"validator_params"`
	Min             *float64       `yaml:"min"`
	Max             *float64       `yaml:"max"`
	Pattern         *string        `yaml:"pattern"`
	Enum            []any          `yaml:"enum"`
	MinLength       *int           `yaml:"min_length"`
}

// ParseGate decodes and checks a gate-definition.yaml document. An empty
// document is a permissive gate. Every lambda (validators and
// cross_field_validation) is compiled here, so that a gate Berth cannot
// enforce is refused when it is loaded. The warnings name what praxis-os
// also only warns about (a field naming a validator that is not defined).
func ParseGate(data []byte) (*Gate, []string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		g := Permissive()
		g.Source = "yaml"
		return g, nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: the gate must be a mapping with checkpoint and evidence_schema", root.Line)
	}
	var raw rawGate
	if err := root.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("invalid gate: %w", err)
	}
	g := &Gate{AllowOverride: true, Fields: []Field{}, Source: "yaml"}
	if raw.Checkpoint != nil {
		if raw.Checkpoint.Strict != nil {
			g.Strict = *raw.Checkpoint.Strict
		}
		if raw.Checkpoint.AllowOverride != nil {
			g.AllowOverride = *raw.Checkpoint.AllowOverride
		}
	}
	if err := g.parseFields(&raw.EvidenceSchema); err != nil {
		return nil, nil, err
	}
	if err := g.parseValidators(&raw.Validators); err != nil {
		return nil, nil, err
	}
	warns, err := g.bindValidators()
	if err != nil {
		return nil, nil, err
	}
	if err := g.parseRules(&raw.CrossFieldValidation); err != nil {
		return nil, nil, err
	}
	return g, warns, nil
}

func (g *Gate) parseFields(n *yaml.Node) error {
	if n.Kind == 0 || n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: evidence_schema must be a mapping of field name to its schema", n.Line)
	}
	if len(n.Content)/2 > maxGateFields {
		return fmt.Errorf("evidence_schema has %d fields; at most %d are allowed", len(n.Content)/2, maxGateFields)
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if name == "" {
			return fmt.Errorf("line %d: evidence_schema has an empty field name", n.Content[i].Line)
		}
		if seen[name] {
			return fmt.Errorf("line %d: evidence field %q is declared twice", n.Content[i].Line, name)
		}
		seen[name] = true
		f, err := parseField(name, n.Content[i+1])
		if err != nil {
			return fmt.Errorf("line %d: evidence field %q: %w", n.Content[i].Line, name, err)
		}
		g.Fields = append(g.Fields, f)
	}
	return nil
}

func parseField(name string, n *yaml.Node) (Field, error) {
	var raw rawField
	if n.Kind != yaml.MappingNode {
		return Field{}, errors.New("must be a mapping with at least a type")
	}
	if err := n.Decode(&raw); err != nil {
		return Field{}, err
	}
	typ := strings.ToLower(strings.TrimSpace(raw.Type))
	if typ == "" {
		typ = TypeString // praxis-os default
	}
	canon, ok := typeAliases[typ]
	if !ok {
		return Field{}, fmt.Errorf("unknown type %q (use boolean, integer, number, string, object or list)", raw.Type)
	}
	f := Field{
		Name: name, Type: canon, Required: raw.Required, Description: raw.Description,
		Min: raw.Min, Max: raw.Max, Enum: raw.Enum, MinLength: raw.MinLength,
		Validator: raw.Validator, ValidatorParams: raw.ValidatorParams,
	}
	numeric := canon == TypeInteger || canon == TypeNumber
	if (f.Min != nil || f.Max != nil) && !numeric {
		return Field{}, fmt.Errorf("min and max apply to integer and number fields, not %s (use min_length)", canon)
	}
	for _, b := range []*float64{f.Min, f.Max} {
		if b != nil && (math.IsNaN(*b) || math.IsInf(*b, 0)) {
			return Field{}, errors.New("min and max must be finite numbers")
		}
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		return Field{}, fmt.Errorf("min %v is above max %v", *f.Min, *f.Max)
	}
	if f.MinLength != nil {
		if canon != TypeString && canon != TypeList && canon != TypeObject {
			return Field{}, fmt.Errorf("min_length applies to string, list and object fields, not %s", canon)
		}
		if *f.MinLength < 0 {
			return Field{}, fmt.Errorf("min_length %d is negative", *f.MinLength)
		}
	}
	if raw.Pattern != nil {
		if canon != TypeString {
			return Field{}, fmt.Errorf("pattern applies to string fields, not %s", canon)
		}
		re, err := pattern.Compile(*raw.Pattern)
		if err != nil {
			return Field{}, err
		}
		f.Pattern, f.re = *raw.Pattern, re
	}
	if raw.Enum != nil {
		if canon == TypeObject || canon == TypeList {
			return Field{}, fmt.Errorf("enum applies to scalar fields, not %s", canon)
		}
		if len(raw.Enum) == 0 {
			return Field{}, errors.New("enum is empty")
		}
		for i, v := range raw.Enum {
			nv, ok := normalizeScalar(v)
			if !ok || !hasType(nv, canon) {
				return Field{}, fmt.Errorf("enum[%d] %v is not a %s", i, v, canon)
			}
			f.Enum[i] = nv
		}
	}
	return f, nil
}
