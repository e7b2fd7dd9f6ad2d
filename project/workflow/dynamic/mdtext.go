package dynamic

import (
	"strings"

	"github.com/yuin/goldmark/ast"
)

// mdText extracts a node's text as praxis-os's parser does with mistletoe:
// inline pieces are joined as they are (inlineText), line breaks become
// "\n", and a list item joins its paragraphs and nested items with
// newlines.
type mdText struct{ src []byte }

func (m mdText) text(n ast.Node) string {
	if n == nil {
		return ""
	}
	switch x := n.(type) {
	case *ast.Text:
		s := string(x.Value(m.src))
		if x.SoftLineBreak() || x.HardLineBreak() {
			s += "\n"
		}
		return s
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			b.WriteString(m.text(c))
		}
		return inlineText(b.String())
	case *ast.ListItem:
		return m.listItem(x)
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(m.src))
		}
		return b.String()
	}
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b.WriteString(m.text(c))
	}
	return b.String()
}

// isParagraph reports a paragraph; goldmark calls the paragraphs of tight
// list items text blocks.
func isParagraph(n ast.Node) bool {
	switch n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return true
	}
	return false
}

// listItem joins an item's paragraphs and nested items, one per line.
func (m mdText) listItem(item *ast.ListItem) string {
	var parts []string
	var inline strings.Builder
	flush := func() {
		if inline.Len() > 0 {
			parts = append(parts, inline.String())
			inline.Reset()
		}
	}
	for c := item.FirstChild(); c != nil; c = c.NextSibling() {
		switch {
		case c.Kind() == ast.KindList:
			flush()
			for nested := c.FirstChild(); nested != nil; nested = nested.NextSibling() {
				if t := m.text(nested); t != "" {
					parts = append(parts, t)
				}
			}
		case isParagraph(c):
			flush()
			if t := m.text(c); t != "" {
				parts = append(parts, t)
			}
		default:
			inline.WriteString(m.text(c))
		}
	}
	flush()
	return strings.Join(parts, "\n")
}
