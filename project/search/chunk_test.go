package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChunkSections(t *testing.T) {
	src := `---
title: Testing standard
tags: [go, tests]
secret: frontmatterword
---
Intro before any heading.

# Title

Title body.

## Section A ##

A body.

` + "```sh\n# not a heading\n\n## nor this\n```\n" + `
### Sub

Sub body.

##### Deep heading stays text

## Empty

## Section B
B body.
`
	doc := chunkMarkdown(src)
	if doc.Meta["title"] != "Testing standard" || doc.Meta["secret"] != "frontmatterword" {
		t.Errorf("meta = %v", doc.Meta)
	}
	type got struct {
		Heading    string
		Start, End int
		First      string
	}
	var gots []got
	for _, s := range doc.Sections {
		first, _, _ := strings.Cut(s.Text, "\n")
		gots = append(gots, got{s.headingPath(), s.StartLine, s.EndLine, first})
		if strings.Contains(s.Text, "frontmatterword") {
			t.Errorf("front matter leaked into section %q", s.headingPath())
		}
	}
	want := []got{
		{"", 6, 6, "Intro before any heading."},
		{"Title", 8, 10, "# Title"},
		{"Title > Section A", 12, 20, "## Section A ##"},
		{"Title > Section A > Sub", 22, 26, "### Sub"},
		{"Title > Section B", 30, 31, "## Section B"},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if s := doc.Sections[2]; !strings.Contains(s.Text, "## nor this") || s.Text[s.BodyStart:] == s.Text {
		t.Errorf("fenced code should stay inside its section: %q", s.Text)
	}
}

func TestChunkSplitsLongSections(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 40 {
		b.WriteString(strings.Repeat("word ", 30))
		b.WriteString("para\n\n")
		if i == 10 {
			b.WriteString("```\ncode\n\nwith blank line\n```\n\n")
		}
	}
	doc := chunkMarkdown(b.String())
	if len(doc.Sections) < 3 {
		t.Fatalf("got %d sections, want the long one split", len(doc.Sections))
	}
	prevEnd := 0
	for i, s := range doc.Sections {
		if !strings.HasPrefix(s.Text, "# Long\n") {
			t.Errorf("part %d does not repeat the heading: %.30q", i, s.Text)
		}
		if s.headingPath() != "Long" {
			t.Errorf("part %d heading %q", i, s.headingPath())
		}
		if s.StartLine <= prevEnd {
			t.Errorf("part %d starts at %d, before the previous end %d", i, s.StartLine, prevEnd)
		}
		prevEnd = s.EndLine
		if body := s.Text[s.BodyStart:]; strings.Count(body, "```")%2 != 0 {
			t.Errorf("part %d cuts a fenced block", i)
		}
		if len(s.Text) > targetPartChars+200 {
			t.Errorf("part %d is %d bytes", i, len(s.Text))
		}
	}
}

func TestAtxHeading(t *testing.T) {
	for _, tc := range []struct {
		line  string
		level int
		title string
		ok    bool
	}{
		{"# A", 1, "A", true},
		{"#### D ####", 4, "D", true},
		{"##### E", 0, "", false},
		{"#NoSpace", 0, "", false},
		{"   ## Indented", 2, "Indented", true},
		{"    # code", 0, "", false},
		{"## C#", 2, "C#", true},
		{"#", 1, "", true},
		{"## Title\r", 2, "Title", true},
	} {
		level, title, ok := atxHeading(tc.line)
		if level != tc.level || title != tc.title || ok != tc.ok {
			t.Errorf("atxHeading(%q) = %d %q %v, want %d %q %v", tc.line, level, title, ok, tc.level, tc.title, tc.ok)
		}
	}
}

func FuzzChunk(f *testing.F) {
	for _, s := range []string{
		"", "# A\nb\n", "---\nk: v\n---\n# T\nbody", "```\n# x\n```\n# y\nz",
		"## a\n\n\n## b\n", "~~~~\n~~~\n# in\n~~~~\n# out\nx", strings.Repeat("p\n\n", 2000),
		"# h\r\nbody\r\n", "---\nno close\n# h\nx", "\xff# bad\n",
		"---\ntitle: " + strings.Repeat("t", 3*maxHeadingBytes) + "\ntags: [" + strings.Repeat("x,", 500) + "]\n---\n# A\nb\n",
		"# " + strings.Repeat("é", maxHeadingBytes) + "\n\n" + strings.Repeat("para\n\n", 3000),
		longHeadingFile(), deepHeadingsFile(),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		var chunks []*chunk
		var err error
		measureAlloc(t, func() {
			chunks, err = buildChunks("a/file.md", content)
		}).within(t, "chunking the input", fileCPUBudget, fileMemBudget)
		doc := chunkMarkdown(content)
		if doc.Over != (len(doc.Sections) == 0 && doc.Stored > maxExpansion(len(content))) {
			t.Fatalf("over %v with %d sections storing %d", doc.Over, len(doc.Sections), doc.Stored)
		}
		stored := 0
		for _, c := range chunks {
			stored += chunkCost(c.file, c.text, c.heading, c.title, c.tags)
			if len(c.title) > maxHeadingBytes || len(c.tags) > maxFileTags {
				t.Fatalf("title of %d bytes, %d tags: over the caps", len(c.title), len(c.tags))
			}
		}
		if stored > maxExpansion(len(content)) || (err == nil) == doc.Over {
			t.Fatalf("%d sections store %d bytes for %d (err %v)", len(chunks), stored, len(content), err)
		}
		lines := strings.Count(content, "\n") + 1
		prevEnd := 0
		// Sections without a body appear only in a file of headings alone,
		// each its heading line.
		bare := 0
		for _, s := range doc.Sections {
			if strings.TrimSpace(s.Text[min(s.BodyStart, len(s.Text)):]) == "" {
				bare++
				if _, _, ok := atxHeading(s.Text); !ok || strings.Contains(s.Text, "\n") {
					t.Fatalf("a section without a body is not a heading line: %q", s.Text)
				}
			}
		}
		if bare > 0 && bare != len(doc.Sections) {
			t.Fatalf("%d of %d sections have no body", bare, len(doc.Sections))
		}
		for _, s := range doc.Sections {
			if s.StartLine < 1 || s.EndLine < s.StartLine || s.EndLine > lines {
				t.Fatalf("bad lines %d-%d of %d", s.StartLine, s.EndLine, lines)
			}
			if s.StartLine <= prevEnd && !strings.HasPrefix(s.Text, "#") && s.StartLine != prevEnd+1 {
				t.Fatalf("sections overlap: %d after %d", s.StartLine, prevEnd)
			}
			prevEnd = s.EndLine
			if s.BodyStart < 0 || s.BodyStart > len(s.Text) {
				t.Fatalf("body offset %d outside text of %d bytes", s.BodyStart, len(s.Text))
			}
			if len(s.Heading) > maxHeadingLevel {
				t.Fatalf("heading path too deep: %v", s.Heading)
			}
			for _, h := range s.Heading {
				if len(h) > maxHeadingBytes {
					t.Fatalf("a heading of %d bytes, over the cap of %d", len(h), maxHeadingBytes)
				}
			}
			// The body is the file's own text (nothing invented).
			if !strings.Contains(content, s.Text[s.BodyStart:]) {
				t.Fatalf("section body is not from the file: %q", s.Text[s.BodyStart:])
			}
		}
	})
}

// A file of headings alone is indexed by them; in a file with text, a
// heading without a body is left to the sections below it.
func TestChunkHeadingOnlyFile(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"# Deployment checklist\n", []string{"# Deployment checklist"}},
		{"# Deployment checklist", []string{"# Deployment checklist"}},
		{"---\ntitle: t\n---\n\n# Stub\r\n\n## Later\n\n", []string{"# Stub", "## Later"}},
		{"# Title\n\n## A\n\nbody\n", []string{"## A\n\nbody"}},
		{"", nil},
		{"\n\n", nil},
	} {
		var got []string
		for _, s := range chunkMarkdown(tc.src).Sections {
			got = append(got, s.Text)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: sections (-want +got):\n%s", tc.src, diff)
		}
	}
}

func TestHeadingOnlyFileIsFound(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".praxis-os/standards/stub.md": "# Kubernetes rollback runbook\n"})
	ix := openReady(t, openDB(t), "p", root)
	got := files(search(t, ix, "rollback runbook"))
	if len(got) != 1 || got[0] != ".praxis-os/standards/stub.md" {
		t.Fatalf("search for the heading of a heading-only file: %v", got)
	}
}
