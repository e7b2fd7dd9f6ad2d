// Package dynamic makes the phases of a dynamic workflow from its source and
// renders the workflow's templates for them, as praxis-os does for
// spec_execution_v1:
//
//   - spec_tasks_parser reads a spec's tasks.md (markdown: its blocks
//     parsed with goldmark, its inline markup by inlineText, in time
//     linear in the file) into phases ("## Phase 1: Name"), their objective and
//     duration, tasks ("- [ ] **Task 1.1**: Name", or "### Task 1.1: Name"),
//     each task's estimate, dependencies and acceptance criteria, and each
//     phase's validation gate;
//   - workflow_definition_parser reads a workflow definition YAML
//     (phases[].number, name, purpose, tasks[], validation_gate).
//
// The parsers follow praxis-os's own (mcp_server/core/parsers.py) rule for
// rule, so that a tasks.md praxis-os accepts gives the same phases here.
// [RenderPhase] and [RenderTask] fill the templates' [PLACEHOLDER] markers.
package dynamic

// Parser names, as metadata.json's dynamic_config.parser gives them.
const (
	ParserSpecTasks          = "spec_tasks_parser"
	ParserWorkflowDefinition = "workflow_definition_parser"
)

// Limits that keep a hostile or mistaken source from costing much.
const (
	// MaxSourceBytes bounds a source (a spec's tasks.md, a workflow
	// definition): what parses in a quarter of a second of CPU and under
	// 64 MiB whatever it holds (measured: 256 KiB of the worst markdown
	// found, 250 ms and 28 MiB; of YAML, 330 ms and 55 MiB). A tasks.md
	// is some tens of KB.
	MaxSourceBytes   = 256 << 10
	maxPhases        = 1000
	maxTasksPerPhase = 1000
)

// Phase is one phase read from the source.
type Phase struct {
	// Number is the phase's number as the source gives it.
	Number            int      `json:"phase_number"`
	Name              string   `json:"phase_name"`
	Description       string   `json:"description"`
	EstimatedDuration string   `json:"estimated_duration"`
	Tasks             []Task   `json:"tasks"`
	ValidationGate    []string `json:"validation_gate"`
}

// Task is one task of a phase.
type Task struct {
	// ID is the source's task id, such as "1.2".
	ID                 string   `json:"task_id"`
	Name               string   `json:"task_name"`
	Description        string   `json:"description"`
	EstimatedTime      string   `json:"estimated_time"`
	Dependencies       []string `json:"dependencies"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
}

// Known reports whether name is a parser this package has.
func Known(name string) bool {
	return name == ParserSpecTasks || name == ParserWorkflowDefinition
}
