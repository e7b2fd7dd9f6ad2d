package finder

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/berth-dev/berth/project/search"
)

// terms are the terms a query matches at weight, its related words left out.
func termsAt(words [][]alt, weight float32) []string {
	var out []string
	for _, w := range words {
		if w[0].weight == weight {
			out = append(out, w[0].term)
		}
	}
	return out
}

func term(word string) string { return search.Words(word)[0] }

// TestCompileQuery: a phrasal verb is matched as its verb, not its words;
// a value as its kind, not its words; a question by what it asks for; a
// word's related words come with it at relatedWeight.
func TestCompileQuery(t *testing.T) {
	for _, c := range []struct {
		task       string
		own, hints []string // the task's own terms (weight 1), the hints (weight 0.5)
	}{
		{"look up our coding guidelines", []string{"code", "guidelin", "search"}, nil},
		{"when was package.json last modified?", []string{"last", "modifi"}, []string{"file", "time"}},
		{"tell the #deploys channel: 2.3.1 is out, at 10% for v2", []string{"tell", "channel", "out", "v2"}, []string{"version", "percentag"}},
		{"add 17 and 25 together", []string{"add", "together"}, []string{"number"}},
		{"which folders may Alice open?", []string{"folder", "may", "alic", "open"}, []string{"name", "list"}},
	} {
		words := compileQuery(c.task)
		if got := termsAt(words, 1); !slices.Equal(got, c.own) {
			t.Errorf("%q: own terms %v, want %v", c.task, got, c.own)
		}
		if got := termsAt(words, valueWeight); !slices.Equal(got, c.hints) {
			t.Errorf("%q: hints %v, want %v", c.task, got, c.hints)
		}
	}
	words := compileQuery("forget Bob")
	if !slices.Contains(words[0], alt{term("delete"), relatedWeight}) {
		t.Errorf("forget: %v, want delete at %v among them", words[0], relatedWeight)
	}
}

// TestTaskVerb: what a task asks to do is its first word, a phrasal verb
// as the verb it means; a question asks for nothing to be done.
func TestTaskVerb(t *testing.T) {
	for task, want := range map[string]string{
		"show me what's inside src/config.ts":       term("show"),
		"Kick off the release process":              term("start"),
		"save this text as notes/todo.md":           term("save"),
		"which files in downloads are the largest?": "",
		"what's in the docs folder?":                "",
		"how many users signed up?":                 "",
		"":                                          "",
		"   ":                                       "",
	} {
		if got := taskVerb(task); got != want {
			t.Errorf("taskVerb(%q) = %q, want %q", task, got, want)
		}
	}
}

// FuzzCompileQuery: any text compiles to words with terms, each word once,
// and to a verb of one term or none, without panic; a query of any length is bounded by the catalog's limit.
func FuzzCompileQuery(f *testing.F) {
	for _, s := range []string{"look up our guidelines", "open a.go, b.go and c.go", "which files? 10% v1.2 #x @y a@b.io https://x", "", "   ", "look", "Ünïcode Straße 東京 ✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxQueryBytes {
			return
		}
		if v := taskVerb(text); strings.ContainsFunc(v, unicode.IsSpace) {
			t.Fatalf("%q: verb %q", text, v)
		}
		seen := map[string]bool{}
		for _, w := range compileQuery(text) {
			if len(w) == 0 || w[0].term == "" || seen[w[0].term] {
				t.Fatalf("%q: word %v", text, w)
			}
			seen[w[0].term] = true
		}
		if strings.TrimSpace(text) == "" && len(seen) > 0 {
			t.Fatalf("%q: blank text compiled to %v", text, seen)
		}
	})
}
