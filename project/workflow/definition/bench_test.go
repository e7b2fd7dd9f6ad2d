package definition

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkLoadPraxisFormat loads the five praxis-format workflows, as a
// reload after an edit does.
func BenchmarkLoadPraxisFormat(b *testing.B) {
	dir := filepath.Join("..", "testdata", "praxis-format")
	for b.Loop() {
		ws, err := LoadAll(dir)
		if err != nil || len(ws) != 5 {
			b.Fatal(err, len(ws))
		}
	}
}

// BenchmarkCheckWithLambdas checks evidence against a gate with two
// validators and two cross-field rules.
func BenchmarkCheckWithLambdas(b *testing.B) {
	g, _, err := ParseGate([]byte(lambdaGate))
	if err != nil {
		b.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(`{"goals": 2, "stories": 4}`), &ev); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r := check(b, g, ev); !r.OK() {
			b.Fatal(r.Errors)
		}
	}
}
