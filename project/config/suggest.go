package config

import (
	"strings"
	"unicode/utf8"
)

// Closest returns the candidate nearest to name, for a "did you mean"
// hint: the one with the fewest single-character edits, when that is few
// enough to be a slip rather than another word (at most a third of the
// longer name, and at least 1; case and the separators '-', '_' and '.'
// count as no difference). It returns "" when none is that close.
func Closest(name string, candidates []string) string {
	best, bestDist := "", -1
	norm := normalize(name)
	for _, c := range candidates {
		d := editDistance(norm, normalize(c))
		limit := max(1, max(utf8.RuneCountInString(name), utf8.RuneCountInString(c))/3)
		if d > limit {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" && c != name {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// normalize makes the spellings a user may mix up compare equal:
// mount-grace, mount_grace, MOUNT_GRACE and mountgrace.
func normalize(s string) string {
	return strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(s))
}

// editDistance is the optimal string alignment distance between a and b,
// in runes: insertions, deletions, substitutions and swaps of two
// neighbours ("nmae" for "name") count one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
