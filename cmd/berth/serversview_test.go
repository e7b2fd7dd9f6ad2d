package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
)

// FuzzPrintable: whatever a value holds, printable shows it without a
// rune a terminal would act on (a control character, a format character
// such as a bidirectional override), unchanged when it has none; and
// writeJSON's output holds none either and decodes to the value itself.
func FuzzPrintable(f *testing.F) {
	for _, seed := range []string{"npx -y mcp-server-fetch", "\r\x1b[2K\x1b[8mfetch\x1b[0m", "\u202egnp.exe", "a\u009bb", "\xff\xfe", "tab\there", "é ü 日本", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := printable(s)
		if strings.ContainsFunc(p, hidden) {
			t.Fatalf("printable(%q) = %q holds a hidden rune", s, p)
		}
		if !strings.ContainsFunc(s, func(r rune) bool { return r == unicode.ReplacementChar || hidden(r) }) && p != s {
			t.Fatalf("printable changed %q to %q", s, p)
		}
		var out bytes.Buffer
		if err := writeJSON(&out, map[string]string{"v": s}); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsFunc(out.String(), func(r rune) bool { return hidden(r) && r != '\n' }) {
			t.Fatalf("writeJSON of %q holds a hidden rune: %q", s, out.String())
		}
		var back map[string]string
		if err := json.Unmarshal(out.Bytes(), &back); err != nil {
			t.Fatalf("writeJSON of %q does not decode: %v", s, err)
		}
		if want := string([]rune(s)); back["v"] != want {
			t.Fatalf("writeJSON of %q decodes to %q", s, back["v"])
		}
	})
}

// TestShownErrEscapes: an error quoting a hostile path keeps its kind and
// its lines, with the runes a terminal acts on escaped.
func TestShownErrEscapes(t *testing.T) {
	err := shownErr(errors.New("nothing was approved: /p/\x1b[8mserver.js belongs to uid 7\nsecond line"))
	if got := err.Error(); got != "nothing was approved: /p/\\x1b[8mserver.js belongs to uid 7\nsecond line" {
		t.Errorf("shownErr: %q", got)
	}
	if !errors.As(shownErr(usageError{"bad \u202e"}), new(usageError)) {
		t.Error("a usage error lost its kind")
	}
	plain := errors.New("plain")
	if shownErr(plain) != plain {
		t.Error("an error without hidden runes was changed")
	}
}
