package dynamic

import "testing"

// TestInlineText: the text of the markup tasks.md files hold, as
// praxis-os's parser reads it.
func TestInlineText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"**Task 1.1**: Create the table", "Task 1.1: Create the table"},
		{"**Objective:** Store greetings", "Objective: Store greetings"},
		{"__Task 2.1__: Handler", "Task 2.1: Handler"},
		{"a *stressed* word and _another_ one", "a stressed word and another one"},
		{"**Task 1.2: Add `x` table**", "Task 1.2: Add "},
		{"**first\nsecond**", "first\n"},
		{"***both***", "both"},
		{"use `go test ./...` here", "use go test ./... here"},
		{"`` a ` b ``", "a ` b"},
		{"see [the guide](docs/guide.md \"title\") now", "see the guide now"},
		{"![a diagram](d.png)", "a diagram"},
		{"[**Task 3.1**: Docs](x)", "Task 3.1: Docs"},
		{"<https://example.com/a>", "https://example.com/a"},
		{"<b>bold</b> stays", "<b>bold</b> stays"},
		{"tasks_completed and files_modified", "tasks_completed and files_modified"},
		{"a * b * c", "a * b * c"},
		{"2 * 3 = 6", "2 * 3 = 6"},
		{`\*not emphasis\*`, `\*not emphasis\*`},
		{"[not a link] and [a]", "[not a link] and [a]"},
		{"[a](unclosed", "[a](unclosed"},
		{"`unclosed code", "`unclosed code"},
		{"**unclosed strong", "**unclosed strong"},
		{"- [ ] criterion", "- [ ] criterion"},
	}
	for _, c := range cases {
		if got := inlineText(c.in); got != c.want {
			t.Errorf("inlineText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzInlineText: whatever the markup, the text is no longer than it.
func FuzzInlineText(f *testing.F) {
	f.Add("**Task 1.1**: x [a](b) `c` <http://d> _e_")
	f.Add("[a](" + "[a](" + "_a**" + "`a``" + "*a *")
	f.Fuzz(func(t *testing.T, s string) {
		if got := inlineText(s); len(got) > len(s) {
			t.Fatalf("inlineText(%q) = %q, longer than its input", s, got)
		}
	})
}
