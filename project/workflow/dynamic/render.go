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
	return render(ctx, "phase", tmpl,
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[PHASE_DESCRIPTION]", p.Description,
		"[ESTIMATED_DURATION]", p.EstimatedDuration,
		"[TASK_COUNT]", strconv.Itoa(len(p.Tasks)),
		"[NEXT_PHASE_NUMBER]", strconv.Itoa(number+1),
		"[VALIDATION_GATE]", checkboxes(p.ValidationGate),
	)
}

// RenderTask fills a task template for task taskNumber (1-based, as
// get_task numbers it) of p, run as phase number: [TASK_ID], [TASK_NAME],
// [TASK_DESCRIPTION], [ESTIMATED_TIME], [PHASE_NUMBER], [PHASE_NAME],
// [DEPENDENCIES] ("None" when there are none), [ACCEPTANCE_CRITERIA] (a
// checklist) and [NEXT_TASK_NUMBER]. Bounded as RenderPhase is.
func RenderTask(ctx context.Context, tmpl string, p Phase, number int, t Task, taskNumber int) (string, error) {
	deps := "None"
	if len(t.Dependencies) > 0 {
		deps = strings.Join(t.Dependencies, ", ")
	}
	return render(ctx, "task", tmpl,
		"[TASK_ID]", t.ID,
		"[TASK_NAME]", t.Name,
		"[TASK_DESCRIPTION]", t.Description,
		"[ESTIMATED_TIME]", t.EstimatedTime,
		"[PHASE_NUMBER]", strconv.Itoa(number),
		"[PHASE_NAME]", p.Name,
		"[DEPENDENCIES]", deps,
		"[ACCEPTANCE_CRITERIA]", checkboxes(t.AcceptanceCriteria),
		"[NEXT_TASK_NUMBER]", strconv.Itoa(taskNumber+1),
	)
}

// render replaces each placeholder of pairs (placeholder, value, ...) in
// tmpl, after checking the size of the result. Placeholders are bracketed
// words without brackets inside, so no two occurrences overlap and counting
// each gives the result's exact size.
func render(ctx context.Context, what, tmpl string, pairs ...string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	size := len(tmpl)
	worst, worstCount := "", 0
	for i := 0; i < len(pairs); i += 2 {
		n := strings.Count(tmpl, pairs[i])
		size += n * (len(pairs[i+1]) - len(pairs[i]))
		if n*len(pairs[i+1]) > worstCount*len(worst) {
			worst, worstCount = pairs[i], n
		}
	}
	if size > MaxRenderedBytes {
		return "", fmt.Errorf("the rendered %s would be %d bytes; at most %d are served (the template's %s, %d times, is the largest part): shorten the template or the spec's text",
			what, size, MaxRenderedBytes, worst, worstCount)
	}
	var b strings.Builder
	b.Grow(size)
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
