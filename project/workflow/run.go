package workflow

import (
	"github.com/berth-dev/berth/project/workflow/definition"
)

// run is a workflow as one session runs it: the definition's static phases
// and, for a dynamic workflow, the phases of the session's plan after them.
type run struct {
	w    *definition.Workflow
	plan *Plan // nil for static workflows
}

// first is the number of the first phase.
func (r run) first() int { return r.w.FirstPhase }

// total is the number of phases.
func (r run) total() int {
	n := len(r.w.Phases)
	if r.plan != nil {
		n += len(r.plan.Phases)
	}
	return n
}

// phase returns phase n: a static phase, or a generated one.
func (r run) phase(n int) (*definition.Phase, bool) {
	if p, ok := r.w.Phase(n); ok {
		return p, true
	}
	if r.plan == nil || r.w.Dynamic == nil {
		return nil, false
	}
	i := n - r.plan.FirstPhase
	if i < 0 || i >= len(r.plan.Phases) {
		return nil, false
	}
	p := r.w.GeneratedPhase(&r.plan.Phases[i], n)
	return &p, true
}

// phases lists every phase in order.
func (r run) phases() []definition.Phase {
	out := append([]definition.Phase{}, r.w.Phases...)
	if r.plan != nil && r.w.Dynamic != nil {
		for i := range r.plan.Phases {
			out = append(out, r.w.GeneratedPhase(&r.plan.Phases[i], r.plan.FirstPhase+i))
		}
	}
	return out
}

// phaseNotFound says that the definition changed under a session.
func (r run) phaseNotFound(n int) error {
	return newError(ErrPhaseNotFound, "the workflow definition changed under the session; list its phases with list_workflows",
		"workflow %q has no phase %d", r.w.Type, n)
}
