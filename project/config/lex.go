package config

import (
	"bytes"
	"fmt"
)

// lexed is what one pass over a config file's text finds before a parser
// reads it: how deeply its sections and lists nest, and the first
// bracket, quote or indentation that looks wrong. The pass knows YAML's
// quotes, comments, flow brackets ([ ] { }), block entries (- ) and block
// scalars (| >) well enough to count nesting in linear time; it is not a
// parser. Its problem is only used to place an error when yaml.v3 refuses
// the file: yaml.v3 names the line where the enclosing section began,
// where a user wants the place the text goes wrong.
type lexed struct {
	depth   int    // the deepest nesting seen
	deep    pos    // where nesting first passed MaxDepth; zero when it did not
	problem *lexAt // the first thing that looks wrong, or nil
}

// pos is a 1-based line and column (in bytes).
type pos struct{ line, col int }

// lexAt is a problem at a position.
type lexAt struct {
	pos
	msg string
}

// opener is a flow bracket still open.
type opener struct {
	ch     byte
	at     pos
	indent int // the indentation of its line
}

type lexer struct {
	out     lexed
	flow    []opener
	indents []int // the block levels open: indentations of key and entry lines
	quote   byte  // the quote of a scalar that goes on past its line, or 0
	quoteAt pos
	block   int  // inside a block scalar (| or >): the indentation of its line; -1 outside
	closed  bool // a flow collection just closed at block level, on this line
}

// lex makes the pass over data.
func lex(data []byte) lexed {
	l := lexer{block: -1}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for n := 1; ; n++ {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		l.line(n, bytes.TrimSuffix(line, []byte("\r")))
		if !more {
			break
		}
		data = rest
	}
	l.end()
	return l.out
}

func (l *lexer) report(at pos, format string, a ...any) {
	if l.out.problem == nil {
		l.out.problem = &lexAt{pos: at, msg: fmt.Sprintf(format, a...)}
	}
}

// nested records the nesting at position at, with dashes block entries
// opened on this line.
func (l *lexer) nested(at pos, dashes int) {
	d := len(l.indents) + dashes + len(l.flow)
	l.out.depth = max(l.out.depth, d)
	if d > MaxDepth && l.out.deep.line == 0 {
		l.out.deep = at
	}
}

func (l *lexer) line(n int, s []byte) {
	indent := 0
	for indent < len(s) && s[indent] == ' ' {
		indent++
	}
	rest := bytes.TrimLeft(s[indent:], " \t")
	if l.block >= 0 {
		if len(rest) == 0 || indent > l.block {
			return // the block scalar's text
		}
		l.block = -1
	}
	l.closed = false
	i := indent
	switch {
	case l.quote != 0:
		if i = l.inQuote(s, 0); l.quote != 0 {
			return
		}
	case len(rest) == 0 || rest[0] == '#':
		return // blank, or a comment
	case s[indent] == '\t' && len(l.flow) == 0:
		l.report(pos{n, indent + 1}, "a tab in the indentation: indent with spaces")
	case len(l.flow) > 0:
		if o := l.flow[len(l.flow)-1]; indent <= l.flow[0].indent && rest[0] != ']' && rest[0] != '}' {
			l.report(pos{n, indent + 1}, "the '%c' opened at %d:%d is not closed before this line: close it with '%c'", o.ch, o.at.line, o.at.col, closer(o.ch))
		}
	case structural(rest):
		l.indentTo(n, indent)
	}
	l.scan(n, s, i, indent)
}

// structural reports whether a line (without its indentation) opens a
// block level: an entry (- ), a complex key (? ) or a key (name: ).
func structural(s []byte) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '?') && (len(s) == 1 || s[1] == ' ') {
		return true
	}
	i := 0
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		if end := bytes.IndexByte(s[1:], s[0]); end >= 0 {
			i = end + 2
		}
	}
	for ; i < len(s); i++ {
		switch {
		case s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t'):
			return true
		case s[i] == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return false
		}
	}
	return false
}

// indentTo closes the block levels deeper than indent and opens one at
// it; a line back to a level never opened is a problem.
func (l *lexer) indentTo(n, indent int) {
	popped := false
	for len(l.indents) > 0 && l.indents[len(l.indents)-1] > indent {
		l.indents = l.indents[:len(l.indents)-1]
		popped = true
	}
	if len(l.indents) > 0 && l.indents[len(l.indents)-1] == indent {
		return
	}
	if popped && len(l.indents) > 0 {
		l.report(pos{n, indent + 1}, "this line's indentation (%d spaces) matches no line above it: line it up with the other keys of its section", indent)
	}
	l.indents = append(l.indents, indent)
}

// scan reads the tokens of line n from s[i:].
func (l *lexer) scan(n int, s []byte, i, indent int) {
	start := true // at the start of a token: a quote or a bracket opens one
	dashes := 0
	l.nested(pos{n, i + 1}, 0)
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if i+1 < len(s) && s[i+1] == '#' {
				return // a comment
			}
		case c == '#' && i == 0:
			return
		case start && (c == '"' || c == '\''):
			l.quote, l.quoteAt = c, pos{n, i + 1}
			i = l.inQuote(s, i+1)
			start = false
			continue
		case (c == '[' || c == '{') && (start || len(l.flow) > 0):
			l.flow = append(l.flow, opener{ch: c, at: pos{n, i + 1}, indent: indent})
			l.nested(pos{n, i + 1}, dashes)
			start = true
		case c == ']' || c == '}':
			if len(l.flow) == 0 {
				if start || l.closed {
					l.report(pos{n, i + 1}, "a '%c' with no '%c' before it: remove it", c, opening(c))
				}
				start = false
				break
			}
			o := l.flow[len(l.flow)-1]
			if closer(o.ch) != c {
				l.report(pos{n, i + 1}, "'%c' closes the '%c' opened at %d:%d: close it with '%c'", c, o.ch, o.at.line, o.at.col, closer(o.ch))
			}
			l.flow = l.flow[:len(l.flow)-1]
			l.closed = len(l.flow) == 0
			start = false
			i++
			continue
		case c == ',' && len(l.flow) > 0:
			start = true
		case c == ':' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t' || len(l.flow) > 0 && isFlowIndicator(s[i+1])):
			start = true
		case (c == '-' || c == '?') && start && len(l.flow) == 0 && (i+1 == len(s) || s[i+1] == ' '):
			dashes++
			l.nested(pos{n, i + 1}, dashes)
		case (c == '|' || c == '>') && start && len(l.flow) == 0:
			l.block = indent
			return // the rest of the line is the block scalar's header
		case (c == '&' || c == '!') && start:
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && !isFlowIndicator(s[i]) {
				i++ // an anchor or a tag: a token still starts after it
			}
			continue
		default:
			start = false
		}
		l.closed = l.closed && (c == ' ' || c == '\t')
		i++
	}
}

// inQuote reads a quoted scalar from s[i:] up to its closing quote and
// returns the index after it; len(s) when it goes on past the line.
func (l *lexer) inQuote(s []byte, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case l.quote == '"' && c == '\\':
			i += 2
			continue
		case c == l.quote && l.quote == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i += 2
			continue
		case c == l.quote:
			l.quote = 0
			return i + 1
		}
		i++
	}
	return len(s)
}

// end reports what is still open at the end of the file.
func (l *lexer) end() {
	if l.quote != 0 {
		l.report(l.quoteAt, "the quote opened here is never closed: close it with %c", l.quote)
	}
	if len(l.flow) > 0 {
		o := l.flow[len(l.flow)-1]
		l.report(o.at, "the '%c' opened here is never closed: close it with '%c'", o.ch, closer(o.ch))
	}
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

func closer(open byte) byte {
	if open == '[' {
		return ']'
	}
	return '}'
}

func opening(close byte) byte {
	if close == ']' {
		return '['
	}
	return '{'
}
