package definition

import (
	"regexp"
	"strings"
)

// skipForms are the skip_condition sentences Berth evaluates; each names the
// start option whose absence (or emptiness) skips the phase.
var skipForms = []*regexp.Regexp{
	regexp.MustCompile("(?i)^no\\s+`?([A-Za-z_][\\w.-]*)`?\\s+(?:is\\s+|are\\s+)?(?:given\\s+|provided\\s+|passed\\s+)?in\\s+(?:the\\s+)?(?:workflow\\s+|start\\s+)?options$"),
	regexp.MustCompile("(?i)^`?([A-Za-z_][\\w.-]*)`?\\s+(?:is\\s+|are\\s+)?(?:not\\s+in|missing\\s+from|absent\\s+from)\\s+(?:the\\s+)?(?:workflow\\s+|start\\s+)?options$"),
	regexp.MustCompile("(?i)^(?:no|not)\\s+options\\.([A-Za-z_][\\w-]*)$"),
}

// SkipOption returns the option a skip_condition tests ("No supporting_docs
// in options" gives supporting_docs), or "" when the sentence is not one
// Berth evaluates.
func SkipOption(cond string) string {
	cond = strings.TrimSuffix(strings.TrimSpace(cond), ".")
	for _, re := range skipForms {
		if m := re.FindStringSubmatch(cond); m != nil {
			return m[1]
		}
	}
	return ""
}

// SkipMet reports whether a phase skippable on option is skipped for these
// start options: the option is absent, null, false, empty text or empty.
func SkipMet(option string, options map[string]any) bool {
	v, ok := options[option]
	if !ok || v == nil {
		return true
	}
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
