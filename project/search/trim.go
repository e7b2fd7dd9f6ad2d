package search

import "strings"

// maxContentChars is the length past which a hit's content is trimmed to a
// window around the matches.
const maxContentChars = 1500

// trimContent returns text, or when it is longer than maxContentChars the
// window of that size holding the most query matches, cut at line (or word)
// boundaries and marked with "…" where text was left out.
func trimContent(an *analyzer, text string, wanted map[string]bool) string {
	if len(text) <= maxContentChars {
		return text
	}
	var hits []int // byte offsets of matching words
	tokenize(text, func(start, end int) {
		match := false
		an.word(text[start:end], true, func(t string) {
			if wanted[t] {
				match = true
			}
		})
		if match {
			hits = append(hits, start)
		}
	})
	from := 0
	bestCount := 0
	for i, lo := 0, 0; i < len(hits); i++ {
		for hits[i]-hits[lo] > maxContentChars*3/4 {
			lo++
		}
		if i-lo+1 > bestCount {
			bestCount = i - lo + 1
			from = hits[lo]
		}
	}
	// Start a little before the first match, at a line start when one is near.
	from = max(0, from-maxContentChars/8)
	if from > 0 {
		if nl := strings.LastIndexByte(text[:from], '\n'); nl >= 0 && from-nl < maxContentChars/4 {
			from = nl + 1
		} else if sp := strings.IndexAny(text[from:], " \n"); sp >= 0 {
			from += sp + 1
		}
	}
	to := min(len(text), from+maxContentChars)
	if to < len(text) {
		if nl := strings.LastIndexByte(text[from:to], '\n'); nl > maxContentChars/2 {
			to = from + nl
		} else if sp := strings.LastIndexByte(text[from:to], ' '); sp > 0 {
			to = from + sp
		}
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…\n")
	}
	b.WriteString(strings.TrimRight(text[from:to], " \n"))
	if to < len(text) {
		b.WriteString("\n…")
	}
	return b.String()
}
