package search

import (
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Tag caps: a file keeps its first maxFileTags distinct tags, each of at
// most maxTagBytes (longer ones are dropped); they are stored with every
// section of the file.
const (
	maxFileTags = 32
	maxTagBytes = 64
)

// Labels are what search_standards can filter on, as praxis-os agents
// send them: a file's tags and its workflow phase.
type labels struct {
	tags  []string // lowercased, as written in the front matter
	phase int      // -1 when the file belongs to no phase
}

// fileLabels reads a file's labels: "tags" and "phase" from its front
// matter (tags as a YAML list or a comma-separated string; phase as a
// number), the phase else from a workflow phase folder in its path
// (".../phases/2/task-1.md" is phase 2). Front matter that is not YAML
// gives no labels from it.
func fileLabels(rel, frontMatter string) labels {
	l := labels{phase: -1}
	var fm struct {
		Tags  yaml.Node `yaml:"tags"`
		Phase yaml.Node `yaml:"phase"`
	}
	if frontMatter != "" && yaml.Unmarshal([]byte(frontMatter), &fm) == nil {
		l.tags = tagList(&fm.Tags)
		if fm.Phase.Kind == yaml.ScalarNode {
			if n, err := strconv.Atoi(strings.TrimSpace(fm.Phase.Value)); err == nil && n >= 0 {
				l.phase = n
			}
		}
	}
	if l.phase < 0 {
		l.phase = phaseFromPath(rel)
	}
	return l
}

// tagList reads a tags value: a sequence of scalars or one scalar with
// comma-separated tags.
func tagList(n *yaml.Node) []string {
	var raw []string
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode {
				raw = append(raw, c.Value)
			}
		}
	case yaml.ScalarNode:
		raw = strings.Split(n.Value, ",")
	}
	var out []string
	for _, t := range raw {
		if len(out) == maxFileTags {
			break
		}
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && len(t) <= maxTagBytes && !containsString(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// phaseFromPath finds "phases/<number>" in a slash-separated path.
func phaseFromPath(rel string) int {
	dir := path.Dir(rel)
	parts := strings.Split(dir, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "phases" {
			if n, err := strconv.Atoi(parts[i+1]); err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasTags reports whether c carries every tag in want (lowercased).
func (c *chunk) hasTags(want []string) bool {
	for _, t := range want {
		if !containsString(c.tags, t) {
			return false
		}
	}
	return true
}
