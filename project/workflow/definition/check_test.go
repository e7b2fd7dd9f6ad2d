package definition

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const checkGate = `checkpoint: {strict: true}
evidence_schema:
  passed: {type: integer, required: true, min: 1, max: 100}
  failed: {type: integer, required: true, max: 0}
  ratio: {type: number, min: 0.5}
  summary: {type: string, required: true, min_length: 5, pattern: "^fix"}
  files: {type: list, min_length: 1}
  level: {type: string, enum: [low, high]}
  code: {type: integer, enum: [1, 2]}
  ok: {type: boolean}
  meta: {type: object, min_length: 1}
`

func TestCheck(t *testing.T) {
	g, _, err := ParseGate([]byte(checkGate))
	if err != nil {
		t.Fatal(err)
	}
	base := `"passed": 3, "failed": 0, "summary": "fix the thing"`
	tests := []struct {
		name        string
		evidence    string // JSON object body
		wantErrs    []string
		wantMissing []string
		wantWarn    string
	}{
		{name: "valid", evidence: base},
		{name: "valid with optionals", evidence: base + `, "ratio": 0.75, "files": ["a.go"], "level": "high", "code": 2, "ok": true, "meta": {"k": 1}`},
		{name: "integral float is an integer", evidence: `"passed": 3.0, "failed": 0, "summary": "fix it!"`},
		{name: "missing required", evidence: `"failed": 0`, wantErrs: []string{`missing required field "passed" (integer)`, `missing required field "summary" (string)`}, wantMissing: []string{"passed", "summary"}},
		{name: "null counts as missing", evidence: `"passed": null, "failed": 0, "summary": "fix it"`, wantErrs: []string{`missing required field "passed" (integer)`}, wantMissing: []string{"passed"}},
		{name: "extra field warns", evidence: base + `, "surprise": 1`, wantWarn: `field "surprise" is not in the evidence schema`},
		{name: "wrong types", evidence: `"passed": "3", "failed": 0.5, "summary": true, "files": "a.go", "ok": "yes", "meta": []`, wantErrs: []string{
			`field "passed" must be an integer, got a string`, `field "failed" must be an integer, got a number`,
			`field "summary" must be a string, got a boolean`, `field "files" must be a list, got a string`,
			`field "ok" must be a boolean, got a string`, `field "meta" must be an object, got a list`,
		}},
		{name: "min and max", evidence: `"passed": 0, "failed": 2, "summary": "fix it", "ratio": 0.1`, wantErrs: []string{
			`field "passed" is 0, below the minimum 1`, `field "failed" is 2, above the maximum 0`, `field "ratio" is 0.1, below the minimum 0.5`,
		}},
		{name: "min_length and pattern", evidence: `"passed": 1, "failed": 0, "summary": "nope", "files": [], "meta": {}`, wantErrs: []string{
			`field "summary" has length 4, below the minimum length 5`, `field "summary" does not match the pattern ^fix`,
			`field "files" has length 0, below the minimum length 1`, `field "meta" has length 0, below the minimum length 1`,
		}},
		{name: "enum", evidence: base + `, "level": "medium", "code": 3`, wantErrs: []string{
			`field "level" must be one of ["low","high"], got "medium"`, `field "code" must be one of [1,2], got 3`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ev map[string]any
			if err := json.Unmarshal([]byte("{"+tc.evidence+"}"), &ev); err != nil {
				t.Fatal(err)
			}
			r := check(t, g, ev)
			got, want := r.Errors, append([]string{}, tc.wantErrs...)
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n got %q\nwant %q", got, want)
			}
			if r.OK() != (len(want) == 0) {
				t.Errorf("OK() = %v", r.OK())
			}
			if !slices.Equal(r.FieldsMissing, append([]string{}, tc.wantMissing...)) {
				t.Errorf("fields_missing %q, want %q", r.FieldsMissing, tc.wantMissing)
			}
			if tc.wantWarn != "" && !strings.Contains(strings.Join(r.Warnings, "\n"), tc.wantWarn) {
				t.Errorf("warnings %q lack %q", r.Warnings, tc.wantWarn)
			}
			if r.Errors == nil || r.Warnings == nil || r.FieldsMissing == nil {
				t.Error("result slices must never be nil")
			}
		})
	}
}

func TestCheckPermissive(t *testing.T) {
	r := check(t, Permissive(), map[string]any{"anything": 1})
	if !r.OK() || len(r.Warnings) != 0 {
		t.Fatalf("permissive gate: %+v", r)
	}
}

// lambdaGate uses every kind of praxis-os lambda check.
const lambdaGate = `checkpoint: {strict: true}
evidence_schema:
  goals: {type: integer, required: true, validator: positive}
  stories: {type: integer, required: true, validator: in_range, validator_params: {min_val: 3, max_val: 10}}
  notes: {type: string, validator: undefined_one}
validators:
  positive: "lambda x: x > 0"
  in_range: "lambda x, min_val, max_val: min_val <= x and x <= max_val"
cross_field_validation:
  - rule: "lambda e: e.get('stories', 0) >= e.get('goals', 0)"
    error_message: "at least as many stories as goals"
  - rule: "lambda e: e['goals'] < 100"
    error_message: "fewer than 100 goals"
`

func TestCheckRunsValidatorsAndCrossFieldRules(t *testing.T) {
	g, warns, err := ParseGate([]byte(lambdaGate))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `validator "undefined_one", which validators does not define`) {
		t.Fatalf("load warnings %q", warns)
	}
	tests := []struct {
		evidence string
		wantErrs []string
		wantWarn string
	}{
		{evidence: `"goals": 2, "stories": 4`},
		{evidence: `"goals": 0, "stories": 4`, wantErrs: []string{`validator "positive" failed for field "goals" (lambda x: x > 0)`}},
		{evidence: `"goals": 5, "stories": 4`, wantErrs: []string{"cross-field validation failed: at least as many stories as goals"}},
		{evidence: `"goals": 2, "stories": 11`, wantErrs: []string{`validator "in_range" failed for field "stories" (lambda x, min_val, max_val: min_val <= x and x <= max_val)`}},
		{evidence: `"stories": 4`, wantErrs: []string{`missing required field "goals" (integer)`, `cross-field rule 1 (fewer than 100 goals) could not be evaluated: key "goals" not in dict`}},
		{evidence: `"goals": 2, "stories": 4, "notes": "x"`, wantWarn: `names validator "undefined_one"`},
	}
	for _, tc := range tests {
		var ev map[string]any
		if err := json.Unmarshal([]byte("{"+tc.evidence+"}"), &ev); err != nil {
			t.Fatal(err)
		}
		r := check(t, g, ev)
		if !slices.Equal(r.Errors, append([]string{}, tc.wantErrs...)) {
			t.Errorf("%s: errors\n got %q\nwant %q", tc.evidence, r.Errors, tc.wantErrs)
		}
		if tc.wantWarn != "" && !strings.Contains(strings.Join(r.Warnings, "\n"), tc.wantWarn) {
			t.Errorf("%s: warnings %q lack %q", tc.evidence, r.Warnings, tc.wantWarn)
		}
	}
}
