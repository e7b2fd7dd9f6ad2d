// Package pattern compiles the regular expressions that repositories put
// in workflow gates (an evidence field's pattern, a lambda's re.search)
// with their cost bounded. Go's regexp runs in time linear in its input,
// but the factor is the size of the compiled program, which a counted
// repetition multiplies: ".{1000}" is a thousand instructions, and ten of
// them over a 500 KB string cost half a minute. So a pattern is refused
// when its text, a counted repetition or its program is too large, and a
// match is refused when the input's length times the program's size
// passes a budget, before any work is done.
package pattern

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// Limits on one pattern and one match.
const (
	// MaxSourceBytes bounds a pattern's text.
	MaxSourceBytes = 512
	// MaxRepeat bounds a counted repetition such as {1,100}.
	MaxRepeat = 100
	// MaxProgram bounds the compiled program, in instructions.
	MaxProgram = 2000
	// MaxWork bounds one match: the input's length in bytes times the
	// program's size. Measured at up to 35 ns per unit (a capturing group
	// around a counted repetition), it keeps a match under 150 ms.
	MaxWork = 4_000_000
)

// Pattern is a compiled regular expression whose cost is known.
type Pattern struct {
	re   *regexp.Regexp
	cost int // instructions of the compiled program
}

// Compile parses src (RE2 syntax, with flags such as (?i)) and checks its
// size. The error names the limit and the fix.
func Compile(src string) (*Pattern, error) {
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("the pattern is %d bytes; at most %d are allowed: write a shorter pattern", len(src), MaxSourceBytes)
	}
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w (RE2 syntax: no look-around or back-references)", src, err)
	}
	if n := maxRepeat(tree); n > MaxRepeat {
		return nil, fmt.Errorf("pattern %q repeats %d times; a counted repetition may be at most {%d}: use + or * instead", short(src), n, MaxRepeat)
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", short(src), err)
	}
	if len(prog.Inst) > MaxProgram {
		return nil, fmt.Errorf("pattern %q compiles to %d instructions; at most %d are allowed: simplify it", short(src), len(prog.Inst), MaxProgram)
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", short(src), err)
	}
	return &Pattern{re: re, cost: len(prog.Inst)}, nil
}

// maxRepeat is the largest count of the counted repetitions in re.
func maxRepeat(re *syntax.Regexp) int {
	n := 0
	if re.Op == syntax.OpRepeat {
		n = max(re.Min, re.Max)
	}
	for _, sub := range re.Sub {
		n = max(n, maxRepeat(sub))
	}
	return n
}

// String is the pattern's source.
func (p *Pattern) String() string { return p.re.String() }

// Cost is the work one byte of input costs: the program's size.
func (p *Pattern) Cost() int { return p.cost }

// MaxInput is the longest input a match may run on.
func (p *Pattern) MaxInput() int { return MaxWork / max(p.cost, 1) }

// Allow says why an input of n bytes may not be matched, or nil.
func (p *Pattern) Allow(n int) error {
	if n <= p.MaxInput() {
		return nil
	}
	return fmt.Errorf("the text is %d bytes and the pattern %q costs %d steps a byte, so at most %d bytes are matched: shorten the text or simplify the pattern",
		n, short(p.re.String()), p.cost, p.MaxInput())
}

// Regexp returns the compiled expression; call Allow before each use.
func (p *Pattern) Regexp() *regexp.Regexp { return p.re }

// MatchString reports whether s contains a match, or why it may not be
// matched.
func (p *Pattern) MatchString(s string) (bool, error) {
	if err := p.Allow(len(s)); err != nil {
		return false, err
	}
	return p.re.MatchString(s), nil
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
