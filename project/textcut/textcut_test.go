package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 10, "…", "short"},
		{"exactly", 7, "…", "exactly"},
		{"abcdef", 3, "…", "abc…"},
		{"abcdef", 3, "", "abc"},
		{"añb", 2, "...", "a..."}, // ñ is two bytes: not cut in two
		{"日本語", 4, "…", "日…"},
		{"日本語", 2, "", ""},
		{"abc", 0, "…", "…"},
		{"abc", -1, "", ""},
	} {
		if got := Cut(c.s, c.n, c.mark); got != c.want {
			t.Errorf("Cut(%q, %d, %q) = %q, want %q", c.s, c.n, c.mark, got, c.want)
		}
	}
}

// FuzzCut: whatever the text, the cut is a prefix of it within the
// budget, valid UTF-8 when the text is, and as long as it can be.
func FuzzCut(f *testing.F) {
	f.Add("añb日本語", 3)
	f.Add(strings.Repeat("é", 200), 301)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Cut(s, n, "")
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Cut(%q, %d) = %q: not a prefix", s, n, got)
		}
		if len(s) <= n {
			if got != s {
				t.Fatalf("Cut(%q, %d) = %q: the text fits", s, n, got)
			}
			return
		}
		if len(got) > max(n, 0) {
			t.Fatalf("Cut(%q, %d) = %q: over the budget", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Cut(%q, %d) = %q: a character cut in two", s, n, got)
		}
		if utf8.ValidString(s) && len(got) < n-(utf8.UTFMax-1) { // a character is at most UTFMax bytes
			t.Fatalf("Cut(%q, %d) = %q: shorter than it needs to be", s, n, got)
		}
	})
}
