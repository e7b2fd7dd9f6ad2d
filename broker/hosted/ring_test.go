package hosted

import (
	"slices"
	"strings"
	"testing"
)

func TestLineWriterAndRing(t *testing.T) {
	r := newRing(3)
	w := &lineWriter{emit: func(s string) { r.add(Line{Server: "s", Text: s}) }}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\r\n\nthree\n" + strings.Repeat("x", 2*maxLine) + "\nfi"))
	if got := r.last(); len(got) != maxLine {
		t.Fatalf("long line kept %d bytes, want %d", len(got), maxLine)
	}
	w.flush()
	var texts []string
	for _, l := range r.snapshot() {
		texts = append(texts, l.Text)
	}
	want := []string{"three", strings.Repeat("x", maxLine), "fi"}
	if !slices.Equal(texts, want) {
		t.Fatalf("ring = %q, want %q (oldest dropped, empty lines skipped)", texts, want)
	}
}
