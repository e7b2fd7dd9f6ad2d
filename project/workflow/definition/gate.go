package definition

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

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
)

// typeAliases maps the spellings found in praxis-os gates to the canonical names.
var typeAliases = map[string]string{
	"boolean": TypeBoolean, "bool": TypeBoolean,
	"integer": TypeInteger, "int": TypeInteger,
	"number": TypeNumber, "float": TypeNumber,
	"string": TypeString, "str": TypeString,
	"object": TypeObject, "dict": TypeObject, "map": TypeObject,
	"list": TypeList, "array": TypeList,
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
	// Unsupported lists one "unsupported validator, not checked" warning per
	// Python validator or cross-field rule.
	Unsupported []string `json:"unsupported,omitempty"`
	// Source is "yaml" for a gate file, "permissive" when the phase has none.
	Source string `json:"source"`
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
	// Validator names a praxis-os lambda validator; it is not evaluated.
	Validator string `json:"validator,omitempty"`

	re *regexp.Regexp
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
	CrossFieldValidation []rawRule      `yaml:"cross_field_validation"`
}

type rawRule struct {
	Rule         string `yaml:"rule"`
	ErrorMessage string `yaml:"error_message"`
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
// document is a permissive gate.
func ParseGate(data []byte) (*Gate, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		g := Permissive()
		g.Source = "yaml"
		return g, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the gate must be a mapping with checkpoint and evidence_schema", root.Line)
	}
	var raw rawGate
	if err := root.Decode(&raw); err != nil {
		return nil, fmt.Errorf("invalid gate: %w", err)
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
		return nil, err
	}
	validators, err := mappingKeys(&raw.Validators, "validators")
	if err != nil {
		return nil, err
	}
	g.Unsupported = unsupported(validators, g.Fields, raw.CrossFieldValidation)
	return g, nil
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
		Validator: raw.Validator,
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
		re, err := regexp.Compile(*raw.Pattern)
		if err != nil {
			return Field{}, fmt.Errorf("pattern: %w", err)
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

// mappingKeys returns the keys of a mapping node (nil when absent).
func mappingKeys(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == 0 || n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s must be a mapping", n.Line, what)
	}
	var keys []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
	}
	return keys, nil
}

// unsupported builds one warning per Python validator and cross-field rule.
func unsupported(validators []string, fields []Field, rules []rawRule) []string {
	var out []string
	usedBy := make(map[string][]string)
	for _, f := range fields {
		if f.Validator != "" {
			usedBy[f.Validator] = append(usedBy[f.Validator], f.Name)
		}
	}
	for _, v := range validators {
		w := fmt.Sprintf("unsupported validator, not checked: validators.%s", v)
		if users := usedBy[v]; len(users) > 0 {
			w += " (used by " + strings.Join(users, ", ") + ")"
		}
		out = append(out, w)
	}
	for _, f := range fields {
		if f.Validator != "" && !slices.Contains(validators, f.Validator) {
			out = append(out, fmt.Sprintf("unsupported validator, not checked: %s.validator %q", f.Name, f.Validator))
		}
	}
	for i, r := range rules {
		w := fmt.Sprintf("unsupported validator, not checked: cross_field_validation[%d]", i)
		if r.ErrorMessage != "" {
			w += " (" + r.ErrorMessage + ")"
		}
		out = append(out, w)
	}
	return out
}
