package dynamic

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// phaseData collects one phase while the document is walked.
type phaseData struct {
	Phase
	nodes     []ast.Node
	taskTexts []string
}

// parseTasksMD reads a spec's tasks.md: a heading of any level that names a
// phase ("Phase 1: Name", "Phase 2 - Name", "3. Name") starts a phase, and
// everything up to the next such heading belongs to it.
func parseTasksMD(data []byte) ([]Phase, error) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, errEmpty
	}
	if err := checkNesting(data); err != nil {
		return nil, err
	}
	// goldmark reads the blocks; inline markup is read by inlineText
	// (inline.go), and link reference definitions stay text.
	doc := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...)).Parse(text.NewReader(data))
	m := mdText{src: data}
	var phases []Phase
	var cur *phaseData
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindHeading {
			if num, name, ok := phaseInfo(m.text(n)); ok {
				if cur != nil {
					phases = append(phases, m.buildPhase(cur))
				}
				cur = &phaseData{Phase: Phase{Number: num, Name: name, EstimatedDuration: "Variable"}}
				continue
			}
		}
		if cur != nil {
			cur.nodes = append(cur.nodes, n)
		}
	}
	if cur != nil {
		phases = append(phases, m.buildPhase(cur))
	}
	return phases, nil
}

// buildPhase reads a phase's metadata, tasks and validation gate from its
// nodes. A task is a heading or paragraph naming one ("Task 1.1: Name"),
// with the paragraphs (and, here, the lists) under it, or a list item
// holding "Task N.M:".
func (m mdText) buildPhase(pd *phaseData) Phase {
	seenGate := false
	var heading string
	var body []string
	flush := func() {
		if heading != "" {
			pd.taskTexts = append(pd.taskTexts, heading+"\n"+strings.Join(body, "\n"))
		}
		heading, body = "", nil
	}
	for _, n := range pd.nodes {
		switch {
		case isParagraph(n):
			t := m.text(n)
			if _, _, ok := taskInfo(t); ok && heading == "" {
				heading, body = t, nil
				continue
			}
			if heading != "" {
				body = append(body, t)
				continue
			}
			if d := metadataValue(t, "objective", "goal", "purpose"); d != "" {
				pd.Description = d
			}
			if d := metadataValue(t, "estimated duration", "estimated effort", "timeframe", "estimated time"); d != "" {
				pd.EstimatedDuration = d
			}
			if strings.Contains(t, "Validation Gate:") {
				seenGate = true
			}
		case n.Kind() == ast.KindList:
			if heading != "" {
				// praxis-os drops the lists under a task heading; they are
				// kept here so that the task's acceptance criteria survive.
				body = append(body, m.listLines(n))
			}
			flush()
			m.listTasks(n, pd, seenGate)
			seenGate = false
		case n.Kind() == ast.KindHeading:
			t := m.text(n)
			flush()
			if _, _, ok := taskInfo(t); ok {
				heading = t
			}
		}
	}
	flush()
	for _, t := range pd.taskTexts {
		if task, ok := parseTask(t); ok {
			pd.Tasks = append(pd.Tasks, task)
		}
	}
	if pd.Description == "" {
		pd.Description = "Phase " + itoa(pd.Number) + " objectives"
	}
	return pd.Phase
}

// listLines is a list's items as "- " lines, the shape acceptance criteria take.
func (m mdText) listLines(list ast.Node) string {
	var lines []string
	for item := list.FirstChild(); item != nil; item = item.NextSibling() {
		for _, l := range strings.Split(m.text(item), "\n") {
			lines = append(lines, "- "+l)
		}
	}
	return strings.Join(lines, "\n")
}

var taskIDRE = regexp.MustCompile(`Task \d+\.\d+:`)

// listTasks takes the tasks and validation gate items of a list.
func (m mdText) listTasks(list ast.Node, pd *phaseData, gate bool) {
	for item := list.FirstChild(); item != nil; item = item.NextSibling() {
		if item.Kind() != ast.KindListItem {
			continue
		}
		t := m.text(item)
		switch {
		case gate:
			pd.ValidationGate = append(pd.ValidationGate, checklist(t)...)
		case taskIDRE.MatchString(t):
			pd.taskTexts = append(pd.taskTexts, t)
		case strings.Contains(t, "Validation Gate:") || len(pd.ValidationGate) > 0 || mentionsValidation(t):
			pd.ValidationGate = append(pd.ValidationGate, checklist(t)...)
		}
	}
}

// mentionsValidation: "validation" in the item's first two lines.
func mentionsValidation(t string) bool {
	lines := strings.SplitN(t, "\n", 3)
	for _, l := range lines[:min(2, len(lines))] {
		if strings.Contains(strings.ToLower(l), "validation") {
			return true
		}
	}
	return false
}

// checklist returns the "- [ ] item" (or "[ ] item") lines of t.
func checklist(t string) []string {
	var out []string
	for _, l := range strings.Split(t, "\n") {
		s := strings.TrimSpace(l)
		var item string
		switch {
		case strings.HasPrefix(s, "- [ ]"):
			item = strings.TrimSpace(s[5:])
		case strings.HasPrefix(s, "[ ]"):
			item = strings.TrimSpace(s[3:])
		}
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parseTask reads one task's id, name, estimate, dependencies and criteria.
func parseTask(t string) (Task, bool) {
	id, name, ok := taskInfo(t)
	if !ok {
		return Task{}, false
	}
	est := metadataValue(t, "estimated time", "estimated duration", "time", "duration")
	if est == "" {
		est = "Variable"
	}
	return Task{
		ID: id, Name: name, Description: name, EstimatedTime: est,
		Dependencies: dependencies(t), AcceptanceCriteria: acceptanceCriteria(t),
	}, true
}

// acceptanceCriteria returns the unchecked items after "Acceptance Criteria:".
func acceptanceCriteria(t string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(t, "\n") {
		if strings.Contains(l, "Acceptance Criteria:") {
			in = true
			continue
		}
		if !in {
			continue
		}
		s := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(s, "- [ ]"):
			out = append(out, strings.TrimSpace(s[5:]))
		case strings.HasPrefix(s, "[ ]"):
			if c := strings.TrimSpace(s[3:]); c != "" {
				out = append(out, c)
			}
		case s != "" && !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "["):
			return out
		}
	}
	return out
}
