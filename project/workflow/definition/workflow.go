package definition

// Workflow is one workflow folder as loaded. A broken workflow has Err set
// and is still listed; what could be read of it stays filled in.
type Workflow struct {
	// Type is the folder name, the workflow_type that tools take.
	Type string
	// Dir is the workflow's folder (absolute when LoadAll got an absolute path).
	Dir  string
	Meta Metadata
	// FirstPhase is 0 when phases/0/ exists, else 1.
	FirstPhase int
	// Phases are in order, FirstPhase first. A dynamic workflow lists the
	// phases its metadata names, without checking their files.
	Phases []Phase
	// Err says why the workflow cannot be run; nil when it can.
	Err error
	// Warnings are problems that do not stop the workflow from running.
	Warnings []string
}

// Phase is one phase of a workflow.
type Phase struct {
	Number             int
	Name               string
	Purpose            string
	EstimatedEffort    string
	KeyDeliverables    []string
	ValidationCriteria []string
	// File is the phase overview, relative to the workflow folder (phases/N/phase.md).
	File  string
	Tasks []Task
	// Gate is never nil: a phase without a gate file has a permissive gate.
	Gate *Gate
}

// Task is one task of a phase.
type Task struct {
	Number  int
	Name    string
	Purpose string
	// File is relative to the workflow folder (phases/N/task-K-slug.md).
	File string
}

// Dynamic reports whether the workflow's phases are generated at run time.
func (w *Workflow) Dynamic() bool { return w.Meta.Dynamic() }

// TotalPhases is the number of phases (metadata's count for dynamic workflows).
func (w *Workflow) TotalPhases() int {
	if w.Dynamic() {
		return w.Meta.TotalPhases.Count
	}
	return len(w.Phases)
}

// LastPhase is the number of the final phase.
func (w *Workflow) LastPhase() int { return w.FirstPhase + w.TotalPhases() - 1 }

// Phase returns phase n.
func (w *Workflow) Phase(n int) (*Phase, bool) {
	for i := range w.Phases {
		if w.Phases[i].Number == n {
			return &w.Phases[i], true
		}
	}
	return nil, false
}

// Task returns task k of the phase.
func (p *Phase) Task(k int) (*Task, bool) {
	for i := range p.Tasks {
		if p.Tasks[i].Number == k {
			return &p.Tasks[i], true
		}
	}
	return nil, false
}
