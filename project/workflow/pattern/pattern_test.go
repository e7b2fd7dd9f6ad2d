package pattern

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

func TestCompileRefusesCostlyPatterns(t *testing.T) {
	cases := []struct{ src, want string }{
		{strings.Repeat(".{1000}", 10) + "z", "repeats 1000 times; a counted repetition may be at most {100}"},
		{"(a{100}|b{100}|c{100}){9}", "compiles to"},
		{strings.Repeat("a", MaxSourceBytes+1), "at most 512 are allowed"},
		{"(?<=a)b", "RE2 syntax"},
		{"[", "missing closing ]"},
	}
	for _, c := range cases {
		if _, err := Compile(c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%.40q) = %v, want %q", c.src, err, c.want)
		}
	}
	for _, ok := range []string{"^fix", `^\d{4}-\d{2}-\d{2}`, "(?i)done|passed", `[\p{L}\p{N}]{1,100}`} {
		if _, err := Compile(ok); err != nil {
			t.Errorf("Compile(%q): %v", ok, err)
		}
	}
}

// TestMatchIsBoundedByItsCost: an input longer than the pattern's cost
// allows is refused before any work, and the costliest pattern allowed,
// on the longest input it allows, stays within a request's budget.
func TestMatchIsBoundedByItsCost(t *testing.T) {
	p, err := Compile(".{100}.{100}.{100}.{100}.{100}z")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 500_000)
	var match bool
	cost := workflowtest.Measure(func() { match, err = p.MatchString(long) })
	if match || err == nil || !strings.Contains(err.Error(), "at most 7952 bytes are matched") {
		t.Fatalf("500 KB against a costly pattern = %v, %v", match, err)
	}
	workflowtest.Refusal.Check(t, "refusing 500 KB", cost)

	worst, err := Compile(strings.Repeat(`(.{100})`, 19) + "z")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Repeat("a", worst.MaxInput())
	cost = workflowtest.Measure(func() { match, err = worst.MatchString(in) })
	if err != nil || match {
		t.Fatalf("the longest input allowed: %v, %v", match, err)
	}
	t.Logf("program of %d instructions on %d bytes: %v", worst.Cost(), len(in), cost.CPU)
	workflowtest.Request.Check(t, "the costliest match allowed", cost)
}

// FuzzPattern: a pattern is refused, or any input it accepts matches
// within a request's budget.
func FuzzPattern(f *testing.F) {
	f.Add("^fix", "fix the bug")
	f.Add(strings.Repeat("(.{100})", 19)+"z", "aaaa")
	f.Add(`(a|b|c|d)*z`, strings.Repeat("abcd", 1000))
	f.Add(`(?i)^done`, "DONE")
	f.Fuzz(func(t *testing.T, src, in string) {
		p, err := Compile(src)
		if err != nil {
			return
		}
		// Grow the input to the longest the pattern allows.
		if len(in) > 0 && len(in) < p.MaxInput() {
			in = strings.Repeat(in, p.MaxInput()/len(in))
		}
		cost := workflowtest.MeasureQuick(func() { p.MatchString(in) })
		workflowtest.Request.Check(t, "a match", cost)
	})
}
