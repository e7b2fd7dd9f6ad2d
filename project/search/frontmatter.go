package search

import "strings"

// frontMatter parses YAML front matter: a first line "---", then lines up to
// a closing "---" or "...". It returns the top-level "key: value" pairs
// (quotes removed), the raw YAML between the delimiters and the index of
// the first line after it. Without a closing line there is no front matter
// and the "---" is text.
func frontMatter(content string, lines []line) (map[string]string, string, int) {
	if len(lines) == 0 || strings.TrimRight(content[lines[0].start:lines[0].end], " \t\r") != "---" {
		return nil, "", 0
	}
	for i := 1; i < len(lines) && i <= maxFrontMatterLines; i++ {
		t := strings.TrimRight(content[lines[i].start:lines[i].end], " \t\r")
		if t != "---" && t != "..." {
			continue
		}
		meta := map[string]string{}
		for _, l := range lines[1:i] {
			parseMetaLine(content[l.start:l.end], meta)
		}
		raw := ""
		if i > 1 {
			raw = content[lines[1].start:lines[i-1].end]
		}
		return meta, raw, i + 1
	}
	return nil, "", 0
}

func parseMetaLine(text string, meta map[string]string) {
	if text == "" || text[0] == ' ' || text[0] == '\t' || text[0] == '#' || text[0] == '-' {
		return // nested values, comments and list items are not top-level keys
	}
	key, value, ok := strings.Cut(text, ":")
	if !ok {
		return
	}
	key = strings.TrimSpace(key)
	value = strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	if key != "" {
		meta[key] = value
	}
}
