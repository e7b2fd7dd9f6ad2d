package dynamic

import "strings"

// The inline markup of a paragraph or heading is read here, not by
// goldmark: goldmark's link and emphasis processing grows with the square
// (or more) of a paragraph's delimiters, so that 64 KB of "_a**" took 4 s
// and 400 KB of "[a](" 49 s. This reader makes one pass over the text,
// after one pass that finds where each construct could end (matching
// brackets, the runs of backticks and emphasis characters), so its work
// stays linear in the text. It gives the text praxis-os's parser gives for
// the markup tasks.md files use: a code span's code, a link's or an
// image's text, an autolink's address, an emphasis's text and, as
// praxis-os does, only the first piece of a strong span (up to its first
// markup or line break). A construct must end within a window, past which
// its opening characters are plain text.

// Windows within which a construct must end, in bytes.
const (
	codeWindow     = 4 << 10
	linkWindow     = 1 << 10
	emphasisWindow = 1 << 10
	autolinkWindow = 512
)

// inlineText is the text of raw inline markdown (lines joined with "\n").
func inlineText(s string) string {
	r := newInlineReader(s)
	return r.read()
}

// inlineReader holds what the first pass found in s.
type inlineReader struct {
	s string
	// match is, for each '[', the index of its ']' (-1: none).
	match []int32
	// stop is, for each index, the first '(' , ')' or line break at or
	// after it (len(s): none).
	stop []int32
	// runs are, by character and length, the starts of the runs of
	// backticks and of the runs of '*' and '_' that may close emphasis,
	// each list with the index of the next run to look at.
	runs map[runKey]*runList
}

type runKey struct {
	c byte
	n int
}

type runList struct {
	at   []int
	next int
}

func newInlineReader(s string) *inlineReader {
	r := &inlineReader{s: s, match: make([]int32, len(s)), stop: make([]int32, len(s)+1), runs: map[runKey]*runList{}}
	var open []int32
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
		case '[':
			r.match[i] = -1
			open = append(open, int32(i))
		case ']':
			if n := len(open); n > 0 {
				r.match[open[n-1]] = int32(i)
				open = open[:n-1]
			}
		case '`', '*', '_':
			n := runOf(s, i, len(s), c)
			if c == '`' || n <= 3 && closes(s, i, n, c) {
				key := runKey{c, n}
				l := r.runs[key]
				if l == nil {
					l = &runList{}
					r.runs[key] = l
				}
				l.at = append(l.at, i)
			}
			i += n - 1
		}
	}
	r.stop[len(s)] = int32(len(s))
	for i := len(s) - 1; i >= 0; i-- {
		r.stop[i] = r.stop[i+1]
		if c := s[i]; c == '(' || c == ')' || c == '\n' {
			r.stop[i] = int32(i)
		}
	}
	return r
}

// nextRun is the start of the first listed run of n c's at or after from
// and before end; -1 when none. Calls for one character and length come
// with growing from, so each list is walked once.
func (r *inlineReader) nextRun(c byte, n, from, end int) int {
	l := r.runs[runKey{c, n}]
	if l == nil {
		return -1
	}
	for l.next < len(l.at) && l.at[l.next] < from {
		l.next++
	}
	if l.next < len(l.at) && l.at[l.next] < end {
		return l.at[l.next]
	}
	return -1
}

func (r *inlineReader) read() string {
	s := r.s
	var b strings.Builder
	b.Grow(len(s))
	// jumps are the ends of constructs whose inside is being read: on
	// reaching jumps[last].at, reading goes on at jumps[last].to.
	type jump struct{ at, to int }
	var jumps []jump
	for i := 0; i < len(s); {
		if n := len(jumps); n > 0 && i >= jumps[n-1].at {
			i = jumps[n-1].to
			jumps = jumps[:n-1]
			continue
		}
		end := len(s)
		if n := len(jumps); n > 0 {
			end = jumps[n-1].at
		}
		c := s[i]
		switch {
		case c == '\\' && i+1 < end && isASCIIPunct(s[i+1]):
			b.WriteString(s[i : i+2]) // kept as written, as goldmark's text keeps it
			i += 2
		case c == '`':
			k := runOf(s, i, end, '`')
			if j := r.nextRun('`', k, i+k, min(end, i+k+codeWindow)); j >= 0 && runOf(s, j, end, '`') == k {
				b.WriteString(codeText(s[i+k : j]))
				i = j + k
				continue
			}
			b.WriteString(s[i : i+k])
			i += k
		case c == '<':
			if j := autolinkEnd(s, i, min(end, i+autolinkWindow)); j >= 0 {
				b.WriteString(s[i+1 : j])
				i = j + 1
				continue
			}
			b.WriteByte(c)
			i++
		case c == '[' || c == '!' && i+1 < end && s[i+1] == '[':
			open := i
			if c == '!' {
				open++
			}
			if label, after := r.link(open, end); label >= 0 {
				jumps = append(jumps, jump{at: label, to: after})
				i = open + 1
				continue
			}
			b.WriteByte(c)
			i++
		case c == '*' || c == '_':
			k := runOf(s, i, end, c)
			close := -1
			if k <= 3 && opens(s, i, k, c) {
				close = r.nextRun(c, k, i+k+1, min(end, i+k+emphasisWindow))
			}
			if close < 0 {
				b.WriteString(s[i : i+k])
				i += k
				continue
			}
			inner := i + k
			if k >= 2 {
				// Strong: its first piece only, as praxis-os reads it.
				if p := firstPiece(s[inner:close]); p < close-inner {
					b.WriteString(s[inner : inner+p])
					i = close + k
					continue
				}
			}
			jumps = append(jumps, jump{at: close, to: close + k})
			i = inner
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// link reads "[text](destination)" whose '[' is at open: label is the
// index of its ']' and after the index past its ')'; label is -1 when it
// is no link (or longer than the window).
func (r *inlineReader) link(open, end int) (label, after int) {
	j := int(r.match[open])
	if j < 0 || j >= end || j-open > linkWindow || j+1 >= end || r.s[j+1] != '(' {
		return -1, 0
	}
	k := int(r.stop[j+2])
	if k >= end || r.s[k] != ')' || k-j > linkWindow {
		return -1, 0
	}
	return j, k + 1
}

// runOf is the length of the run of c starting at i (before end).
func runOf(s string, i, end int, c byte) int {
	j := i
	for j < end && s[j] == c {
		j++
	}
	return j - i
}

// codeText is a code span's content: line breaks as spaces, one space
// stripped from each side when both have one.
func codeText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = s[1 : len(s)-1]
	}
	return s
}

// autolinkEnd finds the '>' closing an autolink (<scheme:...> or
// <address@host>) opened at i; -1 when it is not one. It stops at the
// next '<', so that the scans of a run of '<' do not overlap.
func autolinkEnd(s string, i, end int) int {
	colon, at := false, false
	for j := i + 1; j < end; j++ {
		switch c := s[j]; {
		case c == '>':
			if (colon || at) && j > i+1 {
				return j
			}
			return -1
		case c == ' ' || c == '\t' || c == '\n' || c == '<':
			return -1
		case c == ':':
			colon = true
		case c == '@':
			at = true
		}
	}
	return -1
}

// opens reports whether the run of k c's at i may open emphasis: it is
// followed by something other than space, and an underscore is not
// inside a word (snake_case stays as it is).
func opens(s string, i, k int, c byte) bool {
	next := i + k
	if next >= len(s) || isSpace(s[next]) {
		return false
	}
	return c != '_' || i == 0 || !isWordByte(s[i-1])
}

// closes reports whether the run of k c's at j may close emphasis: it
// follows something other than space, and an underscore is not followed
// by a word character.
func closes(s string, j, k int, c byte) bool {
	if j == 0 || isSpace(s[j-1]) {
		return false
	}
	return c != '_' || j+k >= len(s) || !isWordByte(s[j+k])
}

// firstPiece is the length of a strong span's first piece: up to its first
// markup, or through its first line break.
func firstPiece(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return i + 1
		case '`', '*', '_', '[', '<', '!', '\\':
			if i > 0 {
				return i
			}
			return len(s)
		}
	}
	return len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
