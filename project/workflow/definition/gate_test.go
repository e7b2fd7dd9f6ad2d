package definition

import (
	"strings"
	"testing"
)

// gateCases seed FuzzParseGate as well.
var gateCases = []struct {
	name    string
	yaml    string
	wantErr string
	check   func(t *testing.T, g *Gate)
}{
	{name: "empty is permissive", yaml: "", check: func(t *testing.T, g *Gate) {
		if g.Strict || len(g.Fields) != 0 {
			t.Errorf("gate = %+v", g)
		}
	}},
	{name: "full", yaml: `checkpoint:
  strict: true
  allow_override: false
evidence_schema:
  count:
    type: int
    required: true
    min: 1
    max: 10
  name:
    type: str
    pattern: "^[a-z]+$"
    min_length: 2
  level:
    type: string
    enum: [low, high]
  ratio:
    type: float
  tags:
    type: array
    min_length: 1
  extra:
    type: dict
  flag:
    type: bool
`, check: func(t *testing.T, g *Gate) {
		if !g.Strict || g.AllowOverride || len(g.Fields) != 7 {
			t.Fatalf("gate = %+v", g)
		}
		want := []string{"count:integer", "name:string", "level:string", "ratio:number", "tags:list", "extra:object", "flag:boolean"}
		for i, f := range g.Fields {
			if got := f.Name + ":" + f.Type; got != want[i] {
				t.Errorf("field %d = %s, want %s (file order, canonical type)", i, got, want[i])
			}
		}
	}},
	{name: "defaults", yaml: "evidence_schema:\n  notes: {}\n", check: func(t *testing.T, g *Gate) {
		if g.Strict || !g.AllowOverride || g.Fields[0].Type != TypeString || g.Fields[0].Required {
			t.Errorf("gate = %+v", g)
		}
	}},
	{name: "python validators", yaml: `checkpoint: {strict: false}
evidence_schema:
  goals: {type: integer, required: true, validator: positive}
  stories: {type: integer, validator: in_range, validator_params: {min_val: 3}}
validators:
  positive: "lambda x: x > 0"
cross_field_validation:
  - rule: "lambda e: e['stories'] >= e['goals']"
    error_message: "more stories than goals"
`, check: func(t *testing.T, g *Gate) {
		got := strings.Join(g.Unsupported, "\n")
		for _, want := range []string{
			"unsupported validator, not checked: validators.positive (used by goals)",
			`unsupported validator, not checked: stories.validator "in_range"`,
			"unsupported validator, not checked: cross_field_validation[0] (more stories than goals)",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("unsupported %q lacks %q", got, want)
			}
		}
	}},
	{name: "invalid YAML", yaml: "checkpoint: {strict: true\n", wantErr: "invalid YAML"},
	{name: "not a mapping", yaml: "- a\n- b\n", wantErr: "must be a mapping"},
	{name: "strict not bool", yaml: "checkpoint:\n  strict: maybe\n", wantErr: "invalid gate"},
	{name: "schema not mapping", yaml: "evidence_schema: [a, b]\n", wantErr: "evidence_schema must be a mapping"},
	{name: "field not mapping", yaml: "evidence_schema:\n  a: integer\n", wantErr: "must be a mapping"},
	{name: "unknown type", yaml: "evidence_schema:\n  a: {type: decimal}\n", wantErr: `unknown type "decimal"`},
	{name: "duplicate field", yaml: "evidence_schema:\n  a: {type: string}\n  a: {type: string}\n", wantErr: "declared twice"},
	{name: "min on string", yaml: "evidence_schema:\n  a: {type: string, min: 1}\n", wantErr: "min and max apply"},
	{name: "min above max", yaml: "evidence_schema:\n  a: {type: integer, min: 5, max: 1}\n", wantErr: "above max"},
	{name: "infinite max", yaml: "evidence_schema:\n  a: {type: number, max: .inf}\n", wantErr: "finite"},
	{name: "bad pattern", yaml: "evidence_schema:\n  a: {type: string, pattern: \"(\"}\n", wantErr: "pattern"},
	{name: "pattern on integer", yaml: "evidence_schema:\n  a: {type: integer, pattern: x}\n", wantErr: "pattern applies"},
	{name: "min_length on boolean", yaml: "evidence_schema:\n  a: {type: boolean, min_length: 1}\n", wantErr: "min_length applies"},
	{name: "negative min_length", yaml: "evidence_schema:\n  a: {type: list, min_length: -1}\n", wantErr: "negative"},
	{name: "enum wrong type", yaml: "evidence_schema:\n  a: {type: integer, enum: [1, two]}\n", wantErr: "enum[1]"},
	{name: "enum on list", yaml: "evidence_schema:\n  a: {type: list, enum: [1]}\n", wantErr: "enum applies"},
	{name: "empty enum", yaml: "evidence_schema:\n  a: {type: string, enum: []}\n", wantErr: "enum is empty"},
	{name: "validators not mapping", yaml: "validators: [a]\n", wantErr: "validators must be a mapping"},
}

func TestParseGate(t *testing.T) {
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseGate([]byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, g)
			}
		})
	}
}
