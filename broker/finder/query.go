package finder

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/berth-dev/berth/project/search"
)

// An agent says a task in its own words: verbs with particles ("look
// up", "kick off"), questions ("which ...?") and values (17, PR 42,
// src/config.ts, 10%, Alice). A query is the task's words, each with the
// index terms that match it (its own, and its related words at
// relatedWeight), and the words its phrasal verbs, question and values
// stand for.

// phrasalVerbs are verbs with a particle that mean another verb: the
// pair is matched as that verb, not as its two words ("look up" is not
// "look").
var phrasalVerbs = map[[2]string]string{
	{"look", "up"}: "search", {"look", "through"}: "search", {"look", "for"}: "search", {"search", "for"}: "search",
	{"kick", "off"}: "start", {"set", "up"}: "create", {"spin", "up"}: "start", {"fire", "up"}: "start", {"boot", "up"}: "start",
	{"shut", "down"}: "stop", {"turn", "off"}: "disable", {"turn", "on"}: "enable", {"switch", "off"}: "disable", {"switch", "on"}: "enable",
	{"tear", "down"}: "delete", {"take", "down"}: "stop", {"wipe", "out"}: "delete", {"clean", "up"}: "delete", {"get", "rid"}: "delete",
	{"roll", "back"}: "rollback", {"go", "back"}: "revert", {"back", "up"}: "backup",
	{"note", "down"}: "record", {"write", "down"}: "record", {"jot", "down"}: "record",
	{"pull", "up"}: "show", {"bring", "up"}: "show", {"find", "out"}: "get",
	{"hand", "in"}: "submit", {"sign", "up"}: "register", {"call", "off"}: "cancel", {"set", "off"}: "trigger",
	{"look", "over"}: "review", {"go", "over"}: "review", {"scale", "up"}: "resize", {"scale", "down"}: "resize",
}

// questionWords are what a question asks for, by its first word ("which
// files ...?" asks for a list).
var questionWords = map[string]string{
	"which": "list",
	"who":   "user",
	"when":  "time",
	"where": "find",
}

// valueKinds say what kind of value a word of a task is. A value stands
// for its kind, not for its own words: "package.json" asks for a file,
// not a package; "#deploys" for a channel. Tools' parameters say which
// values they take ("a pull request number", "the file's path").
var valueKinds = []struct {
	re   *regexp.Regexp
	kind string
}{
	{regexp.MustCompile(`^\d+(\.\d+)?%$`), "percentage"},
	{regexp.MustCompile(`^v?\d+(\.\d+){1,3}$`), "version"},
	{regexp.MustCompile(`^\d+([.,]\d+)?$`), "number"},
	{regexp.MustCompile(`^https?://|^www\.`), "url"},
	{regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-z]+$`), "email"},
	{regexp.MustCompile(`^#[\w-]+$`), "channel"},
	{regexp.MustCompile(`^@[\w-]+$`), "user"},
	{regexp.MustCompile(`^[\w.-]*/[\w./-]*$|^[\w-]+\.[a-z][a-z0-9]{0,4}$`), "file"},
}

// Weights, against a word of the task's own: the word a question asks
// for and the kind of a value hint at the tool; a phrasal verb is the
// task's own verb.
const (
	questionWeight = 0.5
	valueWeight    = 0.5
)

// compileQuery turns a task into its words, each with the terms that
// match it, its own words first.
func compileQuery(text string) [][]alt {
	groups := relatedTerms()
	var words [][]alt
	seen := map[string]bool{}
	add := func(text string, weight float32) {
		for _, t := range search.Words(text) {
			if seen[t] {
				continue
			}
			seen[t] = true
			w := []alt{{t, weight}}
			for _, r := range groups[t] {
				w = append(w, alt{r, weight * relatedWeight})
			}
			words = append(words, w)
		}
	}
	type hint struct {
		text   string
		weight float32
	}
	var hints []hint
	raw := strings.Fields(text)
	plain := make([]string, len(raw)) // lowercased letters and digits, "" for a value
	for i, w := range raw {
		w = strings.TrimSuffix(strings.TrimFunc(w, func(c rune) bool { return strings.ContainsRune(`?!,;:()"'“”‘’`, c) }), ".")
		if kind := valueKind(strings.ToLower(w)); kind != "" {
			hints = append(hints, hint{kind, valueWeight})
			raw[i] = ""
			continue
		}
		if i > 0 && isName(w) {
			hints = append(hints, hint{"name", valueWeight})
		}
		plain[i] = strings.ToLower(strings.TrimFunc(w, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }))
	}
	if len(plain) > 0 && questionWords[plain[0]] != "" {
		hints = append(hints, hint{questionWords[plain[0]], questionWeight})
	}
	var rest []string
	for i := 0; i < len(raw); i++ {
		if i+1 < len(raw) {
			if v, ok := phrasalVerbs[[2]string{plain[i], plain[i+1]}]; ok {
				hints = append(hints, hint{v, 1})
				i++
				continue
			}
		}
		rest = append(rest, raw[i])
	}
	add(strings.Join(rest, " "), 1)
	for _, h := range hints {
		add(h.text, h.weight)
	}
	return words
}

// valueKind is the kind of value w is (lowercased, without punctuation
// around), or "".
func valueKind(w string) string {
	for _, k := range valueKinds {
		if k.re.MatchString(w) {
			return k.kind
		}
	}
	return ""
}

// isName reports whether w is capitalized and otherwise lowercase: in a
// task's words but its first, a name (Alice, Apollo, Kubernetes).
func isName(w string) bool {
	r := []rune(strings.TrimFunc(w, func(c rune) bool { return !unicode.IsLetter(c) }))
	if len(r) < 2 || !unicode.IsUpper(r[0]) {
		return false
	}
	for _, c := range r[1:] {
		if !unicode.IsLower(c) {
			return false
		}
	}
	return true
}

// taskVerb is the index term of what a task asks to do: its first word
// ("show me ...", "kick off ..." as the verb it means), or "" when it asks
// a question ("which files ...?").
func taskVerb(text string) string {
	plain := strings.FieldsFunc(strings.ToLower(text), func(c rune) bool { return !unicode.IsLetter(c) })
	plain = plain[:min(2, len(plain))]
	if len(plain) == 0 || questionWords[plain[0]] != "" || askWords[plain[0]] {
		return ""
	}
	verb := plain[0]
	if len(plain) == 2 {
		if v, ok := phrasalVerbs[[2]string{plain[0], plain[1]}]; ok {
			verb = v
		}
	}
	if t := search.Words(verb); len(t) == 1 {
		return t[0]
	}
	return ""
}

// askWords begin a question that is not about a kind (questionWords).
var askWords = map[string]bool{"what": true, "how": true, "why": true, "is": true, "are": true, "does": true, "do": true, "can": true, "could": true}
