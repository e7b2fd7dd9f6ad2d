package dynamic

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

var errEmpty = errors.New("the source is empty")

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func itoa(n int) string { return strconv.Itoa(n) }

// firstNumber returns the first run of digits in r and where it starts.
func firstNumber(r []rune) (n, at int, ok bool) {
	for i := 0; i < len(r); i++ {
		if !isDigit(r[i]) {
			continue
		}
		j := i
		for j < len(r) && isDigit(r[j]) {
			j++
		}
		v, err := strconv.Atoi(string(r[i:j]))
		return v, i, err == nil
	}
	return 0, 0, false
}

// phaseInfo reads a phase heading: "Phase N: Name" (any of : . - — − after
// the number), or "N. Name" without the word. As in praxis-os, a heading
// naming a task, or numbered like a task (1.2), or numbered 0, is no phase.
func phaseInfo(h string) (num int, name string, ok bool) {
	lower := strings.ToLower(h)
	if strings.Contains(lower, "task") {
		return 0, "", false
	}
	r := []rune(h)
	n, at, found := firstNumber(r)
	if !found || n == 0 {
		return 0, "", false
	}
	i := at
	for i < len(r) && isDigit(r[i]) {
		i++
	}
	if !strings.Contains(lower, "phase") {
		if i+1 < len(r) && (r[i] == '.' || r[i] == '-') && isDigit(r[i+1]) {
			return 0, "", false
		}
		for i < len(r) && strings.ContainsRune(".:-— \t", r[i]) {
			i++
		}
		return named(n, string(r[i:]))
	}
	for i < len(r) && (r[i] == ' ' || r[i] == '\t') {
		i++
	}
	if i >= len(r) || !strings.ContainsRune(":.-—−", r[i]) {
		return 0, "", false
	}
	return named(n, string(r[i+1:]))
}

func named(n int, rest string) (int, string, bool) {
	if name := strings.TrimSpace(rest); name != "" {
		return n, name, true
	}
	return 0, "", false
}

// taskInfo reads "Task N.M: Name" (also "N.M Name" at the start, or with -
// between the numbers) and returns "N.M" and the rest of that line.
func taskInfo(t string) (id, name string, ok bool) {
	r := []rune(t)
	i := indexFold(r, "task")
	if i < 0 {
		i = 0
	} else {
		i += 4
	}
	for i < len(r) && strings.ContainsRune(" \t\n*-", r[i]) {
		i++
	}
	n1 := i
	for i < len(r) && isDigit(r[i]) {
		i++
	}
	if i == n1 || i >= len(r) || !strings.ContainsRune(".-−", r[i]) {
		return "", "", false
	}
	first := string(r[n1:i])
	i++
	n2 := i
	for i < len(r) && isDigit(r[i]) {
		i++
	}
	if i == n2 {
		return "", "", false
	}
	id = first + "." + string(r[n2:i])
	for i < len(r) && strings.ContainsRune(" \t:*-−", r[i]) {
		i++
	}
	end := i
	for end < len(r) && r[end] != '\n' {
		end++
	}
	if name = strings.TrimSpace(string(r[i:end])); name == "" {
		return "", "", false
	}
	return id, name, true
}

// indexFold finds the first case-insensitive occurrence of the ASCII word in r.
func indexFold(r []rune, word string) int {
	w := []rune(word)
	for i := 0; i+len(w) <= len(r); i++ {
		match := true
		for j, c := range w {
			if unicode.ToLower(r[i+j]) != c {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// metadataValue finds "Label: value" for the first label present (the first
// occurrence of each label only, as praxis-os does) and returns the value up
// to the end of its line, without HTML tags.
func metadataValue(t string, labels ...string) string {
	r := []rune(t)
	for _, label := range labels {
		at := indexFold(r, label)
		if at < 0 {
			continue
		}
		after := strings.TrimLeftFunc(string(r[at+len([]rune(label)):]), unicode.IsSpace)
		if after == "" || !strings.ContainsRune(":−-—", []rune(after)[0]) {
			continue
		}
		_, size := firstRune(after)
		v := strings.TrimLeftFunc(after[size:], unicode.IsSpace)
		if nl := strings.IndexByte(v, '\n'); nl >= 0 {
			v = v[:nl]
		}
		v = strings.TrimSpace(v)
		if strings.Contains(v, "<") && strings.Contains(v, ">") {
			v = stripTags(v)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

func firstRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, c := range s {
		switch {
		case c == '<':
			in = true
		case c == '>':
			in = false
		case !in:
			b.WriteRune(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// dependencies reads a task's "Dependencies:" value: task ids such as 1.1,
// else the comma-separated words; "None" is none.
func dependencies(t string) []string {
	v := metadataValue(t, "dependencies", "depends on", "requires", "after")
	if v == "" || strings.EqualFold(v, "none") {
		return nil
	}
	var ids []string
	r := []rune(v)
	for i := 0; i < len(r); {
		if !isDigit(r[i]) {
			i++
			continue
		}
		n1 := i
		for i < len(r) && isDigit(r[i]) {
			i++
		}
		if i < len(r) && (r[i] == '.' || r[i] == '-') {
			first := string(r[n1:i])
			i++
			n2 := i
			for i < len(r) && isDigit(r[i]) {
				i++
			}
			if i > n2 {
				ids = append(ids, first+"."+string(r[n2:i]))
			}
		}
	}
	if len(ids) > 0 {
		return ids
	}
	var out []string
	for _, d := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(d))
	}
	return out
}
