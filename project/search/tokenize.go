package search

import (
	"unicode"
	"unicode/utf8"
)

// tokenize calls fn with the byte range [start, end) of every word in text,
// in order. A word is a run of letters, digits, combining marks and
// underscores; a '.' or an apostrophe between two such characters joins the
// run, so "dotted.names", "v1.2" and "don't" are one word each. Everything
// else separates words. Invalid UTF-8 bytes separate words too.
func tokenize(text string, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(text); {
		if c := text[i]; asciiWord[c] {
			// Most bytes: an ASCII letter, digit or underscore.
			if start < 0 {
				start = i
			}
			i++
			continue
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch {
		case isWordRune(r, size):
			if start < 0 {
				start = i
			}
		case start >= 0 && isJoiner(r) && wordRuneAt(text, i+size):
			// Joined: the run continues past the joiner.
		default:
			if start >= 0 {
				fn(start, i)
				start = -1
			}
		}
		i += size
	}
	if start >= 0 {
		fn(start, len(text))
	}
}

// asciiWord marks the ASCII bytes isWordRune takes for a word's.
var asciiWord = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isWordRune(rune(c), 1)
	}
	return t
}()

// isWordRune reports whether r (decoded from size bytes) belongs to a word.
func isWordRune(r rune, size int) bool {
	if r < utf8.RuneSelf {
		return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

func isJoiner(r rune) bool { return r == '.' || r == '\'' || r == '’' }

func wordRuneAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, size := utf8.DecodeRuneInString(text[i:])
	return isWordRune(r, size)
}
