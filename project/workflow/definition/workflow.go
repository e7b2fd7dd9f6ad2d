package definition

import "github.com/berth-dev/berth/project/workflow/dynamic"

// Workflow is one workflow folder as loaded. A broken workflow has Err set
// and is still listed; what could be read of it stays filled in.
type Workflow struct {
	// Type is the folder name, the workflow_type that tools take.
	Type string
	// Dir is the workflow's folder (absolute when LoadAll got an absolute path).
	Dir  string
	Meta Metadata
	// FirstPhase is 0 when phases/0/ exists or metadata lists phase 0, else 1.
	FirstPhase int
	// Phases are the static phases in order, FirstPhase first. A dynamic
	// workflow's generated phases follow them in each session.
	Phases []Phase
	// Dynamic is set for a dynamic workflow: where its phases come from.
	Dynamic *Dynamic
	// Err says why the workflow cannot be run; nil when it can.
	Err error
	// Warnings are problems that do not stop the workflow from running.
	Warnings []string
}

// Dynamic is how a dynamic workflow makes its phases, defaults applied.
type Dynamic struct {
	// SourceKey is the start option that names the source (spec_path).
	SourceKey string `json:"source_key"`
	Parser    string `json:"parser"`
	// PhaseTemplate and TaskTemplate are relative to the workflow folder.
	PhaseTemplate string `json:"phase_template"`
	TaskTemplate  string `json:"task_template"`
	// Block describes the generated phases as metadata's range entry
	// ("1-N") does; nil when metadata has none.
	Block *Phase `json:"-"`
	// Range is the range entry's phase_number ("1-N"), or "".
	Range string `json:"range,omitempty"`
}

// Phase is one phase of a workflow.
type Phase struct {
	Number             int
	Name               string
	Purpose            string
	EstimatedEffort    string
	KeyDeliverables    []string
	ValidationCriteria []string
	// File is the phase overview, relative to the workflow folder
	// (phases/N/phase.md), or the phase template of a generated phase.
	File string
	// Missing is set when the overview file does not exist: the phase's
	// content is then answered from the standards search.
	Missing bool
	// Skippable phases may be skipped; SkipOption, when set, is the start
	// option whose absence skips the phase (from skip_condition).
	Skippable     bool
	SkipCondition string
	SkipOption    string
	Tasks         []Task
	// Gate is never nil: a phase without a gate file has a permissive gate.
	Gate *Gate
	// Generated is the source phase of a generated phase (nil when static).
	Generated *dynamic.Phase
}

// Task is one task of a phase.
type Task struct {
	Number  int
	Name    string
	Purpose string
	// File is relative to the workflow folder (phases/N/task-K-slug.md), or
	// the task template of a generated task.
	File string
	// Missing is set when File does not exist: get_task answers from the
	// standards search.
	Missing bool
	// Generated is the source task of a generated task (nil when static).
	Generated *dynamic.Task
}

// IsDynamic reports whether the workflow's phases are generated at run time.
func (w *Workflow) IsDynamic() bool { return w.Dynamic != nil || w.Meta.Dynamic() }

// TotalPhases is the number of static phases (a dynamic workflow adds its
// generated phases in each session).
func (w *Workflow) TotalPhases() int { return len(w.Phases) }

// LastPhase is the number of the final static phase.
func (w *Workflow) LastPhase() int { return w.FirstPhase + w.TotalPhases() - 1 }

// Phase returns static phase n.
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
