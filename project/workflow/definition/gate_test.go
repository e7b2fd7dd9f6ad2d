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
	{name: "python validators", yaml: lambdaGate, check: func(t *testing.T, g *Gate) {
		if len(g.Validators) != 2 || len(g.Rules) != 2 || g.Rules[0].ErrorMessage != "at least as many stories as goals" {
			t.Errorf("validators %+v rules %+v", g.Validators, g.Rules)
		}
	}},
	{name: "validator does not compile", yaml: "validators:\n  v: \"lambda x: x >\"\n", wantErr: "line 2: validators.v: \"lambda x: x >\" does not compile"},
	{name: "validator chained comparison", yaml: "validators:\n  v: \"lambda x: 0 < x < 9\"\n", wantErr: "write a <= x and x <= b"},
	{name: "validator not a lambda", yaml: "validators:\n  v: \"x > 0\"\n", wantErr: "is not a lambda"},
	{name: "validator without parameter", yaml: "validators:\n  v: \"lambda: True\"\n", wantErr: "takes no parameter"},
	{name: "validator param unknown", yaml: "evidence_schema:\n  a: {type: integer, validator: v, validator_params: {lo: 1}}\nvalidators:\n  v: \"lambda x, low: x > low\"\n", wantErr: "validator_params.lo is not a parameter"},
	{name: "validator param missing", yaml: "evidence_schema:\n  a: {type: integer, validator: v}\nvalidators:\n  v: \"lambda x, low: x > low\"\n", wantErr: "needs low: add it under validator_params"},
	{name: "rule does not compile", yaml: "cross_field_validation:\n  - rule: \"lambda e: e[\"\n    error_message: x\n", wantErr: "cross_field_validation[0]"},
	{name: "rule without rule", yaml: "cross_field_validation:\n  - error_message: x\n", wantErr: "must be {rule"},
	{name: "rule two parameters", yaml: "cross_field_validation:\n  - rule: \"lambda e, f: True\"\n", wantErr: "must take one parameter"},
	{name: "rules not a list", yaml: "cross_field_validation: {a: 1}\n", wantErr: "must be a list"},
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
			g, _, err := ParseGate([]byte(tc.yaml))
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
