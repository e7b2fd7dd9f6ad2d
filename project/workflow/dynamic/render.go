package dynamic

import (
	"strconv"
	"strings"
)

// RenderPhase fills a phase template for p, run as phase number of the
// session: [PHASE_NUMBER], [PHASE_NAME], [PHASE_DESCRIPTION],
// [ESTIMATED_DURATION], [TASK_COUNT], [NEXT_PHASE_NUMBER] and
// [VALIDATION_GATE] (a "- [ ]" checklist).
func RenderPhase(tmpl string, p Phase, number int) string {
	return strings.NewReplacer(
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[PHASE_DESCRIPTION]", p.Description,
		"[ESTIMATED_DURATION]", p.EstimatedDuration,
		"[TASK_COUNT]", strconv.Itoa(len(p.Tasks)),
		"[NEXT_PHASE_NUMBER]", strconv.Itoa(number+1),
		"[VALIDATION_GATE]", checkboxes(p.ValidationGate),
	).Replace(tmpl)
}

// RenderTask fills a task template for task taskNumber (1-based, as
// get_task numbers it) of p, run as phase number: [TASK_ID], [TASK_NAME],
// [TASK_DESCRIPTION], [ESTIMATED_TIME], [PHASE_NUMBER], [PHASE_NAME],
// [DEPENDENCIES] ("None" when there are none), [ACCEPTANCE_CRITERIA] (a
// checklist) and [NEXT_TASK_NUMBER].
func RenderTask(tmpl string, p Phase, number int, t Task, taskNumber int) string {
	deps := "None"
	if len(t.Dependencies) > 0 {
		deps = strings.Join(t.Dependencies, ", ")
	}
	return strings.NewReplacer(
		"[TASK_ID]", t.ID,
		"[TASK_NAME]", t.Name,
		"[TASK_DESCRIPTION]", t.Description,
		"[ESTIMATED_TIME]", t.EstimatedTime,
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[DEPENDENCIES]", deps,
		"[ACCEPTANCE_CRITERIA]", checkboxes(t.AcceptanceCriteria),
		"[NEXT_TASK_NUMBER]", strconv.Itoa(taskNumber+1),
	).Replace(tmpl)
}

func checkboxes(items []string) string {
	lines := make([]string, len(items))
	for i, it := range items {
		lines[i] = "- [ ] " + it
	}
	return strings.Join(lines, "\n")
}
