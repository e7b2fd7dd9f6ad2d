package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// analyzerVersion changes whenever the terms produced for a text change, so
// that an index built by an older analyzer is rebuilt rather than misread:
// indexFormat (records.go) moves with it.
const analyzerVersion = 3

// maxStemCache bounds the per-analyzer stem cache; it is cleared when full.
const maxStemCache = 1 << 17

// maxTermLen drops absurdly long "words" (base64 blobs, minified code).
const maxTermLen = 64

// analyzer turns text into index terms. It keeps a cache of stems, so one
// analyzer must not be used by two goroutines at once.
type analyzer struct {
	stems map[string]string // lowercased word -> stem, "" for a stop word
	parts []string          // scratch
	lower []byte            // scratch
}

func newAnalyzer() *analyzer {
	return &analyzer{stems: make(map[string]string, 1024)}
}

// terms calls fn with every index term of text: for each word, its parts
// (identifier pieces, lowercased, stemmed, stop words dropped) and, for a
// compound identifier such as snake_case, camelCase or dotted.name, the
// whole identifier lowercased as well.
func (a *analyzer) terms(text string, fn func(term string)) {
	tokenize(text, func(start, end int) {
		a.word(text[start:end], true, fn)
	})
}

// stream calls fn with the parts of every word of text in order (stemmed,
// stop words dropped, no compound terms): the sequence phrases match on.
func (a *analyzer) stream(text string, fn func(term string)) {
	tokenize(text, func(start, end int) {
		a.word(text[start:end], false, fn)
	})
}

// streamAgainst is stream for a search for the terms marked in starts: a
// word of ASCII lowercase letters and digits, or a capitalized one, that
// cannot analyze to one of them (see termStarts.may) is passed as "", a
// term that equals none of them, unless it yields no term at all (a stop
// word, or too long), without looking its stem up. So the caller sees
// every term it looks for where stream gives it, and in place of each
// other term one that matches none: the same matches, for a small share of
// the lookups in a stem cache that holds every word of the project and
// misses the processor's cache at most of them.
func (a *analyzer) streamAgainst(text string, starts *termStarts, fn func(term string)) {
	tokenize(text, func(start, end int) {
		w := text[start:end]
		first := w[0]
		switch {
		case !isPlainLower(w[1:]):
			a.word(w, false, fn)
			return
		case 'A' <= first && first <= 'Z':
			// Capitalized: one part, lowercase but for its first letter.
			first += 'a' - 'A'
		case !isPlainLower(w[:1]):
			a.word(w, false, fn)
			return
		}
		switch {
		case starts.may(first, w[1:]):
			a.word(w, false, fn)
		case len(w) > maxTermLen:
		case len(w) <= maxStopWord:
			a.lower = append(append(a.lower[:0], first), w[1:]...)
			if _, stop := stopWords[string(a.lower)]; !stop {
				fn("")
			}
		default:
			fn("")
		}
	})
}

// termStarts marks the beginnings of some terms: their first bytes, and
// their first two.
//
// The term of a word of ASCII lowercase letters and digits begins with the
// word's first two bytes when it is two bytes long or more, and with its
// first byte always: the stemmer leaves a word of one or two letters as it
// is, and of a longer one takes or changes only suffixes that leave two
// letters before them (R1 begins after a vowel and a consonant; a suffix
// cut at "a vowel before it" is not followed by an added e when one letter
// is left), but for its special words dying, lying and tying, which become
// die, lie and tie; erNoun cuts a suffix too. TestPlainWordTermBeginsLikeIt
// checks it over the words of the corpus, of the docs and of the stemmer's
// special cases.
type termStarts struct {
	first [256]bool
	pairs []string // each term's first two bytes; "" for a term of one byte
}

func (s *termStarts) add(term string) {
	s.first[term[0]] = true
	if p := term[:min(2, len(term))]; len(p) == 1 {
		s.pairs = append(s.pairs, "")
	} else if !slices.Contains(s.pairs, p) {
		s.pairs = append(s.pairs, p)
	}
}

// may reports whether a plain word that begins with the byte first, rest
// following it, may analyze to a term of s.
func (s *termStarts) may(first byte, rest string) bool {
	if !s.first[first] {
		return false
	}
	if rest == "" || rest[0] == 'y' { // dying, lying, tying
		return true
	}
	for _, p := range s.pairs {
		if p == "" || p[0] == first && p[1] == rest[0] {
			return true
		}
	}
	return false
}

// word analyzes one word from the tokenizer.
func (a *analyzer) word(w string, compound bool, fn func(term string)) {
	if isPlainLower(w) {
		// Most words: one part, lowercase already.
		if t := a.stemLower(w); t != "" {
			fn(t)
		}
		return
	}
	a.parts = splitIdentifier(w, a.parts[:0])
	whole := ""
	if len(a.parts) > 1 {
		if whole = a.compound(w); whole != "" && compound {
			fn(whole)
		}
	}
	for _, p := range a.parts {
		if whole != "" && utf8.RuneCountInString(p) == 1 {
			// A one-character piece of a compound (the 8s of 8.8.8.8)
			// says nothing the whole does not (and phrases, which
			// match on pieces, skip it on both sides alike).
			continue
		}
		if t := a.stem(p); t != "" {
			fn(t)
		}
	}
}

// compound is the whole identifier, lowercased, without outer underscores
// or apostrophes.
func (a *analyzer) compound(w string) string {
	w = strings.Trim(w, "_'’.")
	if w == "" || len(w) > maxTermLen {
		return ""
	}
	return a.lowerString(w)
}

// stem returns the index term for one identifier part, or "" to drop it.
func (a *analyzer) stem(part string) string {
	if len(part) > maxTermLen {
		return ""
	}
	a.lower = appendLower(a.lower[:0], part)
	if t, ok := a.stems[string(a.lower)]; ok {
		return t
	}
	return a.newStem(string(a.lower))
}

// stemLower is stem for a part that appendLower would leave as it is.
func (a *analyzer) stemLower(low string) string {
	if len(low) > maxTermLen {
		return ""
	}
	if t, ok := a.stems[low]; ok {
		return t
	}
	return a.newStem(strings.Clone(low)) // not a slice of the text: the cache keeps it
}

// isPlainLower reports whether w holds only ASCII lowercase letters and
// digits: splitIdentifier leaves it whole and appendLower as it is.
func isPlainLower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// newStem computes the term of lowercased part low and caches it.
func (a *analyzer) newStem(low string) string {
	t := low
	if isStopWord(low) {
		t = ""
	} else if isStemmable(low) {
		t = english.Stem(strings.ReplaceAll(low, "’", "'"), true)
		if n := erNoun(low); n != "" && !strings.HasSuffix(t, "er") {
			t = n
		}
	}
	if len(a.stems) >= maxStemCache {
		clear(a.stems)
	}
	a.stems[low] = t
	return t
}

// erNoun returns w without its inflection ("resolvers", "registered") when
// that ends in -er, else "". Snowball takes the -er off a long word
// (resolver to resolv, handler to handl), which makes the thing and the act
// one term: "public resolvers" then finds every section that says how a
// name is resolved, and every resolv.conf. A word the stemmer would leave
// in -er keeps it; so does each inflection of an -er word (register,
// registers, registered and registering stay one term).
func erNoun(w string) string {
	for _, suf := range []string{"ing", "ed", "s"} {
		if len(w) > len(suf)+4 && strings.HasSuffix(w, suf) {
			w = w[:len(w)-len(suf)]
			break
		}
	}
	if strings.HasSuffix(w, "rr") {
		w = w[:len(w)-1] // transferred
	}
	if len(w) > 4 && strings.HasSuffix(w, "er") {
		return w
	}
	return ""
}

// forgetStems empties the stem cache and gives its memory back. An index
// keeps its writer's analyzer for its whole life, and after a build or a
// catch-up its cache holds every word of the project: more than the
// index's own dictionary, for words an edit may never bring back.
func (a *analyzer) forgetStems() { a.stems = make(map[string]string) }

func (a *analyzer) lowerString(s string) string {
	a.lower = appendLower(a.lower[:0], s)
	return string(a.lower)
}

// isStemmable reports whether the English stemmer applies: words of
// letters (and apostrophes) only; numbers and mixed tokens stay as they are.
func isStemmable(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '\'' && r != '’' {
			return false
		}
	}
	return true
}

// appendLower appends the lowercase form of s to dst.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[i])
		} else {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += size
	}
	return dst
}

// splitIdentifier appends the parts of a word to dst: it splits on '_' and
// '.', and at case changes ("camelCase" -> camel, Case; "HTTPServer" ->
// HTTP, Server). Apostrophes stay inside their part.
func splitIdentifier(w string, dst []string) []string {
	start := -1
	var prev rune // previous rune inside the current part
	for i, r := range w {
		if r == '_' || r == '.' {
			if start >= 0 {
				dst = append(dst, w[start:i])
				start = -1
			}
			prev = 0
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		if unicode.IsUpper(r) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				// camelCase or v2Beta: a new part starts at r.
				dst = append(dst, w[start:i])
				start = i
			} else if unicode.IsUpper(prev) {
				// Inside an acronym: HTTPServer splits before the 'S'
				// when a lowercase word follows it; a single lowercase
				// letter is the acronym's own (URLs, IPv6 stay whole).
				if lowerAfter(w, i) >= 2 {
					dst = append(dst, w[start:i])
					start = i
				}
			}
		}
		prev = r
	}
	if start >= 0 {
		dst = append(dst, w[start:])
	}
	return dst
}

// lowerAfter counts the lowercase letters that follow the rune at i.
func lowerAfter(w string, i int) int {
	_, size := utf8.DecodeRuneInString(w[i:])
	n := 0
	for _, r := range w[i+size:] {
		if !unicode.IsLower(r) {
			break
		}
		n++
	}
	return n
}
