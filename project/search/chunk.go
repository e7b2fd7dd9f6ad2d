package search

import (
	"strings"
)

// Chunking limits.
const (
	// maxSectionChars is the body size past which a section is split on
	// paragraph boundaries.
	maxSectionChars = 3000
	// targetPartChars is the size the parts of a split section aim for.
	targetPartChars = 2000
	// maxHeadingLevel is the deepest heading that starts a section (####).
	maxHeadingLevel = 4
	// maxFrontMatterLines bounds the search for the closing "---".
	maxFrontMatterLines = 200
)

// section is one chunk of a markdown file.
type section struct {
	Heading   []string // heading path, outermost first; empty for text before the first heading
	StartLine int      // first line, 1-based, in the file
	EndLine   int      // last non-blank line, inclusive
	Text      string   // the section's text, starting with its heading line
	BodyStart int      // offset in Text where the body (after the heading line) begins
}

// headingPath joins the heading path for display: "Title > Section > Sub".
func (s section) headingPath() string { return strings.Join(s.Heading, " > ") }

// document is a chunked markdown file.
type document struct {
	Meta     map[string]string // front matter keys (top-level "key: value" lines)
	RawMeta  string            // the front matter's YAML, between its delimiters
	Sections []section
}

// line is one line of the input: content[start:end] without its newline.
type line struct{ start, end int }

// chunkMarkdown splits content into heading sections. Fenced code stays in
// its section; front matter is metadata, not text; a section whose body is
// longer than maxSectionChars is split on paragraph boundaries with its
// heading line repeated in each part.
func chunkMarkdown(content string) document {
	lines := splitLines(content)
	var doc document
	first := 0
	doc.Meta, doc.RawMeta, first = frontMatter(content, lines)

	var titles [maxHeadingLevel]string
	cur := pending{start: first}
	var fence fenceState
	var bare []section // headings without a body, kept for a file that has nothing else
	for i := first; i < len(lines); i++ {
		text := content[lines[i].start:lines[i].end]
		if fence.inside() {
			fence.feed(text)
			continue
		}
		if fence.feed(text) {
			continue
		}
		level, title, ok := atxHeading(text)
		if !ok {
			continue
		}
		doc.Sections = cur.emit(content, lines, i, doc.Sections)
		bare = cur.bare(content, lines, bare)
		titles[level-1] = title
		for j := level; j < maxHeadingLevel; j++ {
			titles[j] = ""
		}
		var path []string
		for j := 0; j < level; j++ {
			if titles[j] != "" {
				path = append(path, titles[j])
			}
		}
		cur = pending{start: i, heading: path, hasHeading: true}
	}
	doc.Sections = cur.emit(content, lines, len(lines), doc.Sections)
	if len(doc.Sections) == 0 {
		// A file of headings alone (a stub, a title page) is found by them.
		doc.Sections = cur.bare(content, lines, bare)
	}
	return doc
}

// bare appends p's heading line as a section of its own when p has a
// heading; chunkMarkdown uses these only when no section has a body.
func (p pending) bare(content string, lines []line, out []section) []section {
	if !p.hasHeading {
		return out
	}
	head := strings.TrimRight(content[lines[p.start].start:lines[p.start].end], "\r")
	return append(out, section{Heading: p.heading, StartLine: p.start + 1, EndLine: p.start + 1, Text: head, BodyStart: len(head)})
}

// pending is the section being collected.
type pending struct {
	start      int // index of its first line (the heading line, if any)
	heading    []string
	hasHeading bool
}

// emit appends the section spanning lines [p.start, end) to out, split if long.
func (p pending) emit(content string, lines []line, end int, out []section) []section {
	bodyFrom := p.start
	if p.hasHeading {
		bodyFrom++
	}
	// Trim trailing blank lines; skip a section with no body at all.
	last := end - 1
	for last >= bodyFrom && isBlank(content[lines[last].start:lines[last].end]) {
		last--
	}
	if last < bodyFrom {
		return out
	}
	headLine := ""
	if p.hasHeading {
		headLine = content[lines[p.start].start:lines[p.start].end]
	}
	textStart := lines[p.start].start
	textEnd := lines[last].end
	bodyStart := lines[bodyFrom].start - textStart
	if textEnd-textStart-bodyStart <= maxSectionChars {
		return append(out, section{
			Heading:   p.heading,
			StartLine: p.start + 1,
			EndLine:   last + 1,
			Text:      content[textStart:textEnd],
			BodyStart: bodyStart,
		})
	}
	return splitSection(content, lines, p, headLine, bodyFrom, last, out)
}

// splitSection cuts a long section into parts of about targetPartChars on
// paragraph boundaries (blank lines outside fences). The first part starts at
// the heading line; later parts repeat it.
func splitSection(content string, lines []line, p pending, headLine string, bodyFrom, last int, out []section) []section {
	paras := paragraphs(content, lines, bodyFrom, last)
	partFirst := 0
	for i := range paras {
		// Grow the part while the next paragraph still fits.
		if i+1 < len(paras) && lines[paras[i+1].last].end-lines[paras[partFirst].first].start <= targetPartChars {
			continue
		}
		firstLine := paras[partFirst].first
		lastLine := paras[i].last
		body := content[lines[firstLine].start:lines[lastLine].end]
		s := section{Heading: p.heading, EndLine: lastLine + 1}
		switch {
		case !p.hasHeading:
			s.StartLine, s.Text = firstLine+1, body
		case partFirst == 0:
			s.StartLine = p.start + 1
			s.Text = content[lines[p.start].start:lines[lastLine].end]
			s.BodyStart = lines[bodyFrom].start - lines[p.start].start
		default:
			s.StartLine = firstLine + 1
			s.Text = headLine + "\n\n" + body
			s.BodyStart = len(headLine) + 2
		}
		out = append(out, s)
		partFirst = i + 1
	}
	return out
}

// para is a paragraph: lines [first, last], inclusive.
type para struct{ first, last int }

// paragraphs lists the paragraphs in lines [from, last]: runs of non-blank
// lines, where a fenced block (blank lines and all) stays in one paragraph.
func paragraphs(content string, lines []line, from, last int) []para {
	var out []para
	var fence fenceState
	open := -1
	for i := from; i <= last; i++ {
		text := content[lines[i].start:lines[i].end]
		wasInside := fence.inside()
		fence.feed(text)
		blank := isBlank(text) && !wasInside
		switch {
		case blank && open >= 0:
			out = append(out, para{open, i - 1})
			open = -1
		case !blank && open < 0:
			open = i
		}
	}
	if open >= 0 {
		out = append(out, para{open, last})
	}
	return out
}

// splitLines returns the lines of content (a final newline ends the last
// line; it does not start a new one). Carriage returns are left in place.
func splitLines(content string) []line {
	lines := make([]line, 0, strings.Count(content, "\n")+1)
	start := 0
	for start < len(content) {
		i := strings.IndexByte(content[start:], '\n')
		if i < 0 {
			lines = append(lines, line{start, len(content)})
			break
		}
		lines = append(lines, line{start, start + i})
		start += i + 1
	}
	return lines
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// atxHeading parses "#".."####" headings: up to three spaces of indent, the
// hashes, then a space or the end of the line. Closing hashes are dropped.
func atxHeading(text string) (level int, title string, ok bool) {
	text = strings.TrimRight(text, "\r")
	indent := 0
	for indent < len(text) && indent < 4 && text[indent] == ' ' {
		indent++
	}
	if indent > 3 {
		return 0, "", false
	}
	rest := text[indent:]
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > maxHeadingLevel {
		return 0, "", false
	}
	rest = rest[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	title = strings.TrimSpace(rest)
	// A closing sequence of #s preceded by a space is not part of the title.
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		title = strings.TrimSpace(t)
	}
	return level, title, true
}

// fenceState tracks ``` and ~~~ fenced code blocks.
type fenceState struct {
	char byte // 0 when outside a fence
	n    int  // length of the opening fence
}

func (f *fenceState) inside() bool { return f.char != 0 }

// feed consumes one line and reports whether it was a fence line.
func (f *fenceState) feed(text string) bool {
	t := strings.TrimRight(text, "\r")
	indent := 0
	for indent < len(t) && indent < 4 && t[indent] == ' ' {
		indent++
	}
	if indent > 3 {
		return false
	}
	t = t[indent:]
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return false
	}
	c := t[0]
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return false
	}
	if f.char == 0 {
		if c == '`' && strings.ContainsRune(t[n:], '`') {
			return false // an info string may not hold backticks
		}
		f.char, f.n = c, n
		return true
	}
	if c == f.char && n >= f.n && strings.TrimSpace(t[n:]) == "" {
		f.char, f.n = 0, 0
		return true
	}
	return false
}
