package dynamic

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MaxRenderedBytes bounds a rendered phase or task. The size is computed
// from the template and the values before anything is rendered, so that a
// template repeating a placeholder, or a spec with a long text, costs no
// more than this (a phase template is a few KB).
const MaxRenderedBytes = 256 << 10

// RenderPhase fills a phase template for p, run as phase number of the
// session: [PHASE_NUMBER], [PHASE_NAME], [PHASE_DESCRIPTION],
// [ESTIMATED_DURATION], [TASK_COUNT], [NEXT_PHASE_NUMBER] and
// [VALIDATION_GATE] (a "- [ ]" checklist). It refuses a result larger than
// MaxRenderedBytes, and stops when ctx ends.
func RenderPhase(ctx context.Context, tmpl string, p Phase, number int) (string, error) {
	return render(ctx, "phase", tmpl, phasePairs(p, number))
}

// RenderTask fills a task template for task taskNumber (1-based, as
// get_task numbers it) of p, run as phase number: [TASK_ID], [TASK_NAME],
// [TASK_DESCRIPTION], [ESTIMATED_TIME], [PHASE_NUMBER], [PHASE_NAME],
// [DEPENDENCIES] ("None" when there are none), [ACCEPTANCE_CRITERIA] (a
// checklist) and [NEXT_TASK_NUMBER]. Bounded as RenderPhase is.
func RenderTask(ctx context.Context, tmpl string, p Phase, number int, t Task, taskNumber int) (string, error) {
	return render(ctx, "task", tmpl, taskPairs(p, number, t, taskNumber))
}

// CheckPlan checks that every phase (numbered from first) and every task
// of phases renders within MaxRenderedBytes from these templates, without
// rendering any: a session is refused at start rather than stuck on a
// phase it cannot show. Each template's placeholders are counted once.
func CheckPlan(phaseTmpl, taskTmpl string, phases []Phase, first int) error {
	pc, tc := countPlaceholders(phaseTmpl, phasePairs(Phase{}, 0)), countPlaceholders(taskTmpl, taskPairs(Phase{}, 0, Task{}, 0))
	for i, p := range phases {
		n := first + i
		if err := checkSize("phase", len(phaseTmpl), pc, phasePairs(p, n)); err != nil {
			return fmt.Errorf("phase %d (%s): %w", n, p.Name, err)
		}
		for k, t := range p.Tasks {
			if err := checkSize("task", len(taskTmpl), tc, taskPairs(p, n, t, k+1)); err != nil {
				return fmt.Errorf("task %s of phase %d: %w", t.ID, n, err)
			}
		}
	}
	return nil
}

func phasePairs(p Phase, number int) []string {
	return []string{
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[PHASE_DESCRIPTION]", p.Description,
		"[ESTIMATED_DURATION]", p.EstimatedDuration,
		"[TASK_COUNT]", strconv.Itoa(len(p.Tasks)),
		"[NEXT_PHASE_NUMBER]", strconv.Itoa(number + 1),
		"[VALIDATION_GATE]", checkboxes(p.ValidationGate),
	}
}

func taskPairs(p Phase, number int, t Task, taskNumber int) []string {
	deps := "None"
	if len(t.Dependencies) > 0 {
		deps = strings.Join(t.Dependencies, ", ")
	}
	return []string{
		"[TASK_ID]", t.ID,
		"[TASK_NAME]", t.Name,
		"[TASK_DESCRIPTION]", t.Description,
		"[ESTIMATED_TIME]", t.EstimatedTime,
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[DEPENDENCIES]", deps,
		"[ACCEPTANCE_CRITERIA]", checkboxes(t.AcceptanceCriteria),
		"[NEXT_TASK_NUMBER]", strconv.Itoa(taskNumber + 1),
	}
}

// countPlaceholders counts each placeholder of pairs in tmpl. Placeholders
// are bracketed words without brackets inside, so no two occurrences
// overlap and the counts give a result's exact size.
func countPlaceholders(tmpl string, pairs []string) []int {
	counts := make([]int, len(pairs)/2)
	for i := range counts {
		counts[i] = strings.Count(tmpl, pairs[2*i])
	}
	return counts
}

// checkSize refuses a result of more than MaxRenderedBytes, naming the
// placeholder that adds the most.
func checkSize(what string, tmplLen int, counts []int, pairs []string) error {
	size := tmplLen
	worst, worstAdds := 0, -1
	for i, n := range counts {
		adds := n * (len(pairs[2*i+1]) - len(pairs[2*i]))
		size += adds
		if adds > worstAdds {
			worst, worstAdds = i, adds
		}
	}
	if size <= MaxRenderedBytes {
		return nil
	}
	return fmt.Errorf("the rendered %s would be %d bytes; at most %d are served (the template's %s, %d times, is the largest part): shorten the template or the spec's text",
		what, size, MaxRenderedBytes, pairs[2*worst], counts[worst])
}

// render replaces each placeholder of pairs (placeholder, value, ...) in
// tmpl, after checking the size of the result.
func render(ctx context.Context, what, tmpl string, pairs []string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkSize(what, len(tmpl), countPlaceholders(tmpl, pairs), pairs); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(tmpl))
	if _, err := strings.NewReplacer(pairs...).WriteString(&b, tmpl); err != nil {
		return "", err
	}
	return b.String(), ctx.Err()
}

func checkboxes(items []string) string {
	lines := make([]string, len(items))
	for i, it := range items {
		lines[i] = "- [ ] " + it
	}
	return strings.Join(lines, "\n")
}
