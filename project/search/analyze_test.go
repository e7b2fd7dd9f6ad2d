package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func analyzeAll(text string) []string {
	var out []string
	newAnalyzer().terms(text, func(t string) { out = append(out, t) })
	return out
}

func TestAnalyzerTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Closing the file", []string{"close", "file"}},
		{"close", []string{"close"}},
		{"copies copy", []string{"copi", "copi"}},
		{"snake_case", []string{"snake_case", "snake", "case"}},
		{"camelCase", []string{"camelcase", "camel", "case"}},
		{"HTTPServer", []string{"httpserver", "http", "server"}},
		{"dotted.names", []string{"dotted.names", "dot", "name"}},
		{"config.yaml, end. Next", []string{"config.yaml", "config", "yaml", "end", "next"}},
		{"v1.2 and 42", []string{"v1.2", "v1", "42"}},
		{"8.8.8.8", []string{"8.8.8.8"}},
		{"IPv6 URLs", []string{"ipv6", "url"}},
		{"XMLHttpRequest", []string{"xmlhttprequest", "xml", "http", "request"}},
		{"__init__", []string{"init"}},
		{"don't panic", []string{"don't", "panic"}},
		{"Ünïcödé Straße ΑΒΓ", []string{"ünïcödé", "straße", "αβγ"}},
		{"the a an of", nil},
		{"multi-agent", []string{"multi", "agent"}},
	} {
		if diff := cmp.Diff(tc.want, analyzeAll(tc.text)); diff != "" {
			t.Errorf("terms(%q) (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestStemmingMatchesQueries(t *testing.T) {
	an := newAnalyzer()
	for _, pair := range [][2]string{
		{"closing", "close"}, {"copies", "copy"}, {"running", "runs"}, {"standards", "standard"},
		{"resolvers", "resolver"}, {"handlers", "handler"},
		{"register", "registered"}, {"registers", "registering"}, {"transfer", "transferred"},
		{"resolve", "resolved"}, {"servers", "server"},
	} {
		if a, b := an.stem(pair[0]), an.stem(pair[1]); a != b {
			t.Errorf("stem(%q)=%q, stem(%q)=%q: want equal", pair[0], a, pair[1], b)
		}
	}
	// A noun in -er is not the act it names: Snowball alone stems
	// resolver and resolve, handler and handle, alike.
	for _, pair := range [][2]string{{"resolvers", "resolve"}, {"handler", "handling"}, {"container", "contains"}} {
		if a, b := an.stem(pair[0]), an.stem(pair[1]); a == b {
			t.Errorf("stem(%q) and stem(%q) are both %q: want them apart", pair[0], pair[1], a)
		}
	}
}

// tokenSeeds seed the tokenizer fuzzer (and the table above).
var tokenSeeds = []string{
	"", "a", "Closing the file", "snake_case camelCase dotted.names", "a..b", "x.", ".x",
	"don't ’quoted’ it’s", "Ünïcödé Straße", "\xff\xfe bad utf8 \xc3", "e\u0301t\u00e9", "日本語のテキスト",
	"```go\nfunc main() {}\n```", "1.2.3 v2Beta __x__", "tab\tand\nnewline",
}

// referenceWords is a slow, obviously correct splitter used as the oracle:
// it marks every byte as word or not, then applies the joiner rule.
func referenceWords(text string) [][2]int {
	type r struct {
		start, size int
		word, join  bool
	}
	var runes []r
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRuneInString(text[i:])
		word := c != utf8.RuneError || size > 1
		word = word && (c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsNumber(c) || unicode.IsMark(c))
		runes = append(runes, r{i, size, word, c == '.' || c == '\'' || c == '’'})
		i += size
	}
	var out [][2]int
	start := -1
	for k, x := range runes {
		in := x.word || (start >= 0 && x.join && k+1 < len(runes) && runes[k+1].word)
		if in && start < 0 {
			start = x.start
		}
		if !in && start >= 0 {
			out = append(out, [2]int{start, x.start})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

func FuzzTokenize(f *testing.F) {
	for _, s := range tokenSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var got [][2]int
		tokenize(text, func(start, end int) { got = append(got, [2]int{start, end}) })
		// Tokens round-trip: they match the reference splitter exactly, so
		// every word character of the text is in exactly one token.
		if diff := cmp.Diff(referenceWords(text), got); diff != "" {
			t.Fatalf("tokens of %q (-want +got):\n%s", text, diff)
		}
		for _, tok := range got {
			w := text[tok[0]:tok[1]]
			if !utf8.ValidString(w) {
				t.Fatalf("token %q is not valid UTF-8", w)
			}
			// Analysis of a token never panics and yields bounded terms.
			newAnalyzer().word(w, true, func(term string) {
				if term == "" || len(term) > 4*maxTermLen {
					t.Fatalf("bad term %q from %q", term, w)
				}
			})
		}
	})
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range tokenSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		an := newAnalyzer()
		var terms, stream []string
		an.terms(text, func(s string) { terms = append(terms, s) })
		an.stream(text, func(s string) { stream = append(stream, s) })
		// The phrase stream holds index terms only.
		for _, s := range stream {
			if !slices.Contains(terms, s) {
				t.Fatalf("stream term %q is not an index term of %q", s, text)
			}
		}
		// Analysis is deterministic, cache or not.
		var again []string
		newAnalyzer().terms(text, func(s string) { again = append(again, s) })
		if !slices.Equal(terms, again) {
			t.Fatalf("analysis not deterministic for %q: %v vs %v", text, terms, again)
		}
		// A phrase made of the whole text is found in it.
		if len(stream) > 0 && !containsPhrase(an, text, stream) {
			t.Fatalf("text %q does not contain its own phrase %v", text, stream)
		}
		// streamAgainst gives every term of the stream it is asked for
		// where stream does, and in place of another term either it or ""
		// (here every other term of the stream is asked for).
		var starts termStarts
		asked := map[string]bool{}
		for i, s := range stream {
			if i%2 == 0 {
				starts.add(s)
				asked[s] = true
			}
		}
		var against []string
		newAnalyzer().streamAgainst(text, &starts, func(s string) { against = append(against, s) })
		if len(against) != len(stream) {
			t.Fatalf("streamAgainst of %q gave %q, stream %q", text, against, stream)
		}
		for i, s := range stream {
			if against[i] != s && (against[i] != "" || asked[s]) {
				t.Fatalf("streamAgainst of %q gave %q, stream %q", text, against, stream)
			}
		}
	})
}

// TestPlainWordTermBeginsLikeIt checks, over the words of the generated
// corpus, of Berth's documentation and of the stemmer's special cases, what
// streamAgainst relies on: a word of ASCII lowercase letters and digits
// that analyzes to a term is one termStarts.may lets through for it.
func TestPlainWordTermBeginsLikeIt(t *testing.T) {
	words := slices.Clone(newCorpusGen(1).vocab)
	words = append(words, strings.Fields(`skis skies dying lying tying idly gently ugly early only singly
		sky news howe atlas cosmos bias andes inning innings outing outings canning cannings herring
		herrings earring earrings proceed proceeds proceeded proceeding exceed succeed ies ied eed eing
		aing yes yelled ayes sensational possibility organization relational generously hopping hoping
		filing cries ties happy agreed feed bed cry by ys ya y2k 3des x86 resolvers registered`)...)
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no documents to take words from: %v", err)
	}
	for _, d := range docs {
		data, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ToLower(string(data))
		tokenize(text, func(start, end int) { words = append(words, text[start:end]) })
	}
	an := newAnalyzer()
	checked := 0
	for _, w := range words {
		if !isPlainLower(w) {
			continue
		}
		checked++
		term := an.stemLower(w)
		if term == "" {
			continue
		}
		var s termStarts
		s.add(term)
		if !s.may(w[0], w[1:]) {
			t.Errorf("%q analyzes to %q", w, term)
		}
	}
	if checked < 30000 {
		t.Fatalf("only %d words checked", checked)
	}
}
