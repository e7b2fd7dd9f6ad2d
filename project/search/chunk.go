package search

import (
	"strings"

	"github.com/berth-dev/berth/project/textcut"
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
	// maxHeadingBytes caps a heading's title, and a file's front matter
	// title, as stored with every section below it and analyzed for its
	// heading field; a longer one is cut at a character boundary. A split
	// section repeats its heading line cut to maxHeadingBytes plus its
	// hashes.
	maxHeadingBytes = 256
	// sectionOverhead is what a section costs beyond its text and heading
	// path when stored (its record and posting entries, roughly).
	sectionOverhead = 64
)

// maxExpansion is what the sections of a file of size bytes may store in
// all: their text, heading paths, file path, title and tags, each section
// counted with its own copies (see chunkCost). Past it the file is not
// indexed: a heading repeated over thousands of tiny sections would
// otherwise multiply the file many times over in memory and in berth.db.
func maxExpansion(size int) int { return 2*size + 64<<10 }

// chunkCost is what one section stores: see maxExpansion.
func chunkCost(file, text string, heading []string, title string, tags []string) int {
	n := sectionOverhead + len(file) + len(text) + len(title)
	for _, h := range heading {
		n += len(h)
	}
	for _, t := range tags {
		n += len(t)
	}
	return n
}

// cutUTF8 returns s cut to at most n bytes, at a character boundary.
func cutUTF8(s string, n int) string { return textcut.Cut(s, n, "") }

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
	// Stored is what Sections store, without the file path, title and tags
	// (see chunkCost); past maxExpansion of the content's size the chunker
	// stops and sets Over.
	Stored int
	Over   bool
	budget int
}

// add appends s to the document unless that takes it past its budget.
func (d *document) add(s section) {
	if d.Over {
		return
	}
	d.Stored += chunkCost("", s.Text, s.Heading, "", nil)
	if d.Stored > d.budget {
		d.Over = true
		d.Sections = nil
		return
	}
	d.Sections = append(d.Sections, s)
}

// line is one line of the input: content[start:end] without its newline.
type line struct{ start, end int }

// chunkMarkdown splits content into heading sections. Fenced code stays in
// its section; front matter is metadata, not text; a section whose body is
// longer than maxSectionChars is split on paragraph boundaries with its
// heading line (cut to maxHeadingBytes) repeated in each part. Heading
// titles are cut to maxHeadingBytes. When the sections would store more
// than maxExpansion of the content's size, it stops: the document has no
// sections and Over is set.
func chunkMarkdown(content string) document {
	lines := splitLines(content)
	doc := document{budget: maxExpansion(len(content))}
	first := 0
	doc.Meta, doc.RawMeta, first = frontMatter(content, lines)

	var titles [maxHeadingLevel]string
	cur := pending{start: first}
	var fence fenceState
	// Headings without a body, kept for a file that has nothing else.
	bare := document{budget: doc.budget}
	for i := first; i < len(lines) && !doc.Over; i++ {
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
		cur.emit(content, lines, i, &doc)
		cur.bare(content, lines, &bare)
		titles[level-1] = cutUTF8(title, maxHeadingBytes)
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
	cur.emit(content, lines, len(lines), &doc)
	if len(doc.Sections) == 0 && !doc.Over {
		// A file of headings alone (a stub, a title page) is found by them.
		cur.bare(content, lines, &bare)
		doc.Sections, doc.Stored, doc.Over = bare.Sections, bare.Stored, bare.Over
	}
	return doc
}

// bare adds p's heading line as a section of its own to doc when p has a
// heading; chunkMarkdown uses these only when no section has a body.
func (p pending) bare(content string, lines []line, doc *document) {
	if !p.hasHeading {
		return
	}
	head := strings.TrimRight(cutHeadLine(content[lines[p.start].start:lines[p.start].end]), "\r")
	doc.add(section{Heading: p.heading, StartLine: p.start + 1, EndLine: p.start + 1, Text: head, BodyStart: len(head)})
}

// pending is the section being collected.
type pending struct {
	start      int // index of its first line (the heading line, if any)
	heading    []string
	hasHeading bool
}

// emit adds the section spanning lines [p.start, end) to doc, split if long.
func (p pending) emit(content string, lines []line, end int, doc *document) {
	if doc.Over {
		return
	}
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
		return
	}
	headLine := ""
	if p.hasHeading {
		headLine = cutHeadLine(content[lines[p.start].start:lines[p.start].end])
	}
	if lines[last].end-lines[bodyFrom].start <= maxSectionChars {
		text, bodyStart := p.text(content, lines, headLine, bodyFrom, last)
		doc.add(section{
			Heading:   p.heading,
			StartLine: p.start + 1,
			EndLine:   last + 1,
			Text:      text,
			BodyStart: bodyStart,
		})
		return
	}
	splitSection(content, lines, p, headLine, bodyFrom, last, doc)
}

// cutHeadLine cuts a heading line to maxHeadingBytes and room for its
// hashes: the form in which sections store it.
func cutHeadLine(s string) string { return cutUTF8(s, maxHeadingBytes+2*maxHeadingLevel) }

// text returns the text of lines [p.start, last] with its heading line as
// headLine (cut when it was long), and the offset of its body (line
// bodyFrom) in it.
func (p pending) text(content string, lines []line, headLine string, bodyFrom, last int) (string, int) {
	start, end := lines[p.start].start, lines[last].end
	if !p.hasHeading || len(headLine) == lines[p.start].end-start {
		return content[start:end], lines[bodyFrom].start - start
	}
	rest := content[lines[p.start].end:end] // from the heading line's newline on
	return headLine + rest, len(headLine) + lines[bodyFrom].start - lines[p.start].end
}

// splitSection cuts a long section into parts of about targetPartChars on
// paragraph boundaries (blank lines outside fences). The first part starts at
// the heading line; later parts repeat it (as headLine, cut when long).
func splitSection(content string, lines []line, p pending, headLine string, bodyFrom, last int, doc *document) {
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
			s.Text, s.BodyStart = p.text(content, lines, headLine, bodyFrom, lastLine)
		default:
			s.StartLine = firstLine + 1
			s.Text = headLine + "\n\n" + body
			s.BodyStart = len(headLine) + 2
		}
		doc.add(s)
		if doc.Over {
			return
		}
		partFirst = i + 1
	}
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
