package dynamic

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseTasksMD parses the small spec's tasks.md, as a start of
// spec_execution_v1 does.
func BenchmarkParseTasksMD(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "specs", "2025-10-07-small-feature", "tasks.md"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(ParserSpecTasks, data); err != nil {
			b.Fatal(err)
		}
	}
}
