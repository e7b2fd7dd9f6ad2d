package pylambda

import (
	"strings"
	"unicode"
)

// token is one lexical piece of a Python expression. Only what the rewrites
// need is told apart: names, strings, brackets and everything else.
type token struct {
	kind byte // 'n' name, 's' string, '(' ')' '[' ']' '{' '}' ',' brackets and comma, 'o' other, ' ' space
	text string
}

// tokenize splits src into tokens; strings (with any prefix and triple
// quotes) are kept whole so that nothing inside them is rewritten.
func tokenize(src string) []token {
	var out []token
	r := []rune(src)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			j := i
			for j < len(r) && unicode.IsSpace(r[j]) {
				j++
			}
			out = append(out, token{' ', string(r[i:j])})
			i = j
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(r) && (r[j] == '_' || unicode.IsLetter(r[j]) || unicode.IsDigit(r[j])) {
				j++
			}
			if j < len(r) && (r[j] == '\'' || r[j] == '"') && isStringPrefix(string(r[i:j])) {
				end := stringEnd(r, j)
				out = append(out, token{'s', string(r[i:end])})
				i = end
				continue
			}
			out = append(out, token{'n', string(r[i:j])})
			i = j
		case c == '\'' || c == '"':
			end := stringEnd(r, i)
			out = append(out, token{'s', string(r[i:end])})
			i = end
		case strings.ContainsRune("()[]{},", c):
			out = append(out, token{byte(c), string(c)})
			i++
		default:
			out = append(out, token{'o', string(c)})
			i++
		}
	}
	return out
}

func isStringPrefix(p string) bool {
	switch strings.ToLower(p) {
	case "r", "b", "rb", "br", "u", "f", "fr", "rf":
		return true
	}
	return false
}

// stringEnd returns the index just past the string literal starting with the
// quote at r[i] (or len(r) when it is not closed: the parser reports that).
func stringEnd(r []rune, i int) int {
	q := r[i]
	triple := i+2 < len(r) && r[i+1] == q && r[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(r) {
		switch {
		case r[j] == '\\':
			j += 2
			continue
		case triple && j+2 < len(r) && r[j] == q && r[j+1] == q && r[j+2] == q:
			return j + 3
		case !triple && r[j] == q:
			return j + 1
		case !triple && r[j] == '\n':
			return j
		}
		j++
	}
	return len(r)
}

// translate rewrites the Python syntax Starlark lacks (see the package doc).
func translate(src string) string {
	toks := tokenize(src)
	toks = rewriteIs(toks)
	return rewriteGenerators(toks)
}

// rewriteIs turns "is not" into "!=" and "is" into "==".
func rewriteIs(toks []token) []token {
	out := make([]token, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != 'n' || t.text != "is" {
			out = append(out, t)
			continue
		}
		j := i + 1
		for j < len(toks) && toks[j].kind == ' ' {
			j++
		}
		if j < len(toks) && toks[j].kind == 'n' && toks[j].text == "not" {
			out = append(out, token{'o', "!="})
			i = j
			continue
		}
		out = append(out, token{'o', "=="})
	}
	return out
}

// rewriteGenerators wraps the contents of a parenthesized group that holds a
// top-level "for" and no top-level comma in brackets, so that a generator
// expression becomes a list comprehension.
func rewriteGenerators(toks []token) string {
	open := make(map[int]bool)  // index of "(" to follow with "["
	close := make(map[int]bool) // index of ")" to precede with "]"
	type frame struct {
		at          int
		kind        byte
		sawFor, sep bool
	}
	var stack []frame
	for i, t := range toks {
		switch t.kind {
		case '(', '[', '{':
			stack = append(stack, frame{at: i, kind: t.kind})
		case ')', ']', '}':
			if len(stack) == 0 {
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if t.kind == ')' && f.kind == '(' && f.sawFor && !f.sep {
				open[f.at], close[i] = true, true
			}
		case ',':
			if len(stack) > 0 {
				stack[len(stack)-1].sep = true
			}
		case 'n':
			if t.text == "for" && len(stack) > 0 {
				stack[len(stack)-1].sawFor = true
			}
		}
	}
	var b strings.Builder
	for i, t := range toks {
		if close[i] {
			b.WriteByte(']')
		}
		b.WriteString(t.text)
		if open[i] {
			b.WriteByte('[')
		}
	}
	return b.String()
}
