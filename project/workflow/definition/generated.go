package definition

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/berth-dev/berth/project/workflow/dynamic"
)

// Evidence fields of a generated phase's gate, as the phase template of
// spec_execution_v1 asks for them.
const (
	FieldTasksCompleted = "tasks_completed"
	FieldValidationGate = "validation_gate"
	FieldTestsPassing   = "tests_passing"
	FieldFilesModified  = "files_modified"
)

// GeneratedPhase is source phase p run as phase number: its overview and
// tasks are rendered from the workflow's templates, and its gate is strict
// and asks for what p's validation gate and tasks name.
func (w *Workflow) GeneratedPhase(p *dynamic.Phase, number int) Phase {
	out := Phase{
		Number: number, Name: p.Name, Purpose: p.Description, EstimatedEffort: p.EstimatedDuration,
		KeyDeliverables: []string{}, ValidationCriteria: append([]string{}, p.ValidationGate...),
		File: w.Dynamic.PhaseTemplate, Tasks: make([]Task, 0, len(p.Tasks)), Gate: GeneratedGate(p), Generated: p,
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		out.Tasks = append(out.Tasks, Task{
			Number: i + 1, Name: t.ID + " " + t.Name, Purpose: t.Description, File: w.Dynamic.TaskTemplate, Generated: t,
		})
	}
	return out
}

// GeneratedGate is the gate of a generated phase: tasks_completed must list
// every task id of the phase, validation_gate must confirm (true) every
// criterion of the phase's validation gate; tests_passing and
// files_modified are optional and type-checked.
func GeneratedGate(p *dynamic.Phase) *Gate {
	g := &Gate{Strict: true, Fields: []Field{}, Source: "dynamic"}
	ids := make([]string, 0, len(p.Tasks))
	for _, t := range p.Tasks {
		ids = append(ids, t.ID)
	}
	g.Fields = append(g.Fields,
		Field{Name: FieldTasksCompleted, Type: TypeList, Required: len(ids) > 0, MustInclude: ids,
			Description: "the ids of the phase's tasks you completed (all of them): " + strings.Join(ids, ", ")},
		Field{Name: FieldValidationGate, Type: TypeObject, Required: len(p.ValidationGate) > 0, MustConfirm: append([]string{}, p.ValidationGate...),
			Description: "each criterion of the phase's validation gate, set to true once met"},
		Field{Name: FieldTestsPassing, Type: TypeInteger, Min: ptr(0.0), Description: "how many tests pass"},
		Field{Name: FieldFilesModified, Type: TypeList, Description: "the files the phase changed"},
	)
	return g
}

// RequiredGate is the gate of a phase whose metadata checkpoint names
// required_evidence and that has no gate file: strict, each field required.
func RequiredGate(req RequiredEvidence) *Gate {
	g := &Gate{Strict: true, Fields: []Field{}, Source: "metadata"}
	for _, f := range req {
		typ, ok := typeAliases[strings.ToLower(strings.TrimSpace(f.Type))]
		if !ok {
			typ = TypeAny
		}
		g.Fields = append(g.Fields, Field{Name: f.Name, Type: typ, Required: true, Description: f.Description})
	}
	return g
}

func ptr[T any](v T) *T { return &v }

// checkIncludes says which of MustInclude the list v lacks. Items compare
// as text, with a leading "Task " ignored, so 1.2, "1.2" and "Task 1.2" match.
func (f *Field) checkIncludes(v any) []string {
	list, _ := v.([]any)
	have := make(map[string]bool, len(list))
	for _, item := range list {
		have[idText(item)] = true
	}
	var lack []string
	for _, want := range f.MustInclude {
		if !have[idText(want)] {
			lack = append(lack, want)
		}
	}
	if len(lack) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("field %q lacks %s: complete those tasks and list every one of %s", f.Name, strings.Join(lack, ", "), strings.Join(f.MustInclude, ", "))}
}

func idText(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	s = strings.TrimSpace(s)
	if len(s) > 5 && strings.EqualFold(s[:5], "task ") {
		s = strings.TrimSpace(s[5:])
	}
	return s
}

// checkConfirms says which of MustConfirm the object v does not set to
// true. A key matches a criterion written out, in any case, or as a
// snake_case slug of it.
func (f *Field) checkConfirms(v any) []string {
	obj, _ := v.(map[string]any)
	confirmed := make(map[string]bool, len(obj))
	for k, val := range obj {
		if isYes(val) {
			confirmed[slug(k)] = true
		}
	}
	var lack []string
	for _, c := range f.MustConfirm {
		if !confirmed[slug(c)] {
			lack = append(lack, fmt.Sprintf("%q", c))
		}
	}
	if len(lack) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("field %q does not confirm %s: set each criterion to true once it is met", f.Name, strings.Join(lack, ", "))}
}

func isYes(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "pass", "passed", "done", "✅":
			return true
		}
	}
	return false
}

// slug lowercases s and joins its words with "_".
func slug(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
			continue
		}
		sep = true
	}
	return b.String()
}
