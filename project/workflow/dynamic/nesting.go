package dynamic

import (
	"bytes"
	"fmt"
)

// maxNesting bounds how many blocks (quotes, list items) one line of
// tasks.md opens: goldmark's work on a line grows with the square of it
// (50 KB of ">" took 4.6 s, of "- " 6.4 s). A real tasks.md nests a few.
const maxNesting = 16

// checkNesting refuses data when a line opens more than maxNesting
// blocks, counted as the quote markers and list markers at its start.
// (Nesting by indentation alone, one marker a line, costs goldmark little.)
func checkNesting(data []byte) error {
	line := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			end = len(data)
		}
		if d := nesting(data[:end]); d > maxNesting {
			return fmt.Errorf("line %d nests %d blocks (quotes or list items); at most %d are read: flatten it", line, d, maxNesting)
		}
		data = data[min(end+1, len(data)):]
		line++
	}
	return nil
}

// nesting counts the blocks a line's start opens.
func nesting(l []byte) int {
	depth := 0
	for i := 0; i < len(l); {
		switch c := l[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '>':
			depth++
			i++
		case (c == '-' || c == '*' || c == '+') && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t'):
			depth++
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && j-i < 10 && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j < len(l) && (l[j] == '.' || l[j] == ')') && (j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t') {
				depth++
				i = j + 1
				continue
			}
			return depth
		default:
			return depth
		}
	}
	return depth
}
