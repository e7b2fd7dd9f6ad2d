// Package textcut cuts text to a budget of bytes without splitting a
// UTF-8 sequence: what a log line, an error kept for a listing or a
// heading in an index may hold.
package textcut

import "unicode/utf8"

// Cut is s when it fits in n bytes; else the longest prefix of s of at
// most n bytes that ends on a character boundary, followed by mark (such
// as "…", or "" for none; mark is not counted in n).
func Cut(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
