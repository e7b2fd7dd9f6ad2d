package workflow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/project/workflow/dynamic"
)

// Where a phase's or task's content comes from.
const (
	SourceFile     = "file"
	SourceTemplate = "template"
	SourceSearch   = "search"
)

// PhaseView is a phase as clients see it: its overview content, its tasks
// and the gate its evidence must pass.
type PhaseView struct {
	PhaseNumber        int               `json:"phase_number"`
	PhaseName          string            `json:"phase_name"`
	Purpose            string            `json:"purpose,omitempty"`
	EstimatedEffort    string            `json:"estimated_effort,omitempty"`
	KeyDeliverables    []string          `json:"key_deliverables"`
	ValidationCriteria []string          `json:"validation_criteria"`
	Content            string            `json:"content" jsonschema:"the phase overview (phase.md, or the rendered phase template of a generated phase)"`
	Source             string            `json:"source" jsonschema:"where content comes from: file, template (a phase generated from the spec) or search (the overview file is missing)"`
	Skippable          bool              `json:"skippable,omitempty" jsonschema:"the phase may be skipped: complete_phase with skip true"`
	SkipCondition      string            `json:"skip_condition,omitempty"`
	Tasks              []TaskSummary     `json:"tasks"`
	Gate               *definition.Gate  `json:"gate" jsonschema:"the checkpoint: evidence fields and whether the gate is strict"`
	Checkpoint         *CheckpointStatus `json:"checkpoint,omitempty"`
	Warnings           []string          `json:"warnings,omitempty"`
}

// TaskSummary names one task of a phase; get_task returns its content.
type TaskSummary struct {
	TaskNumber    int      `json:"task_number"`
	TaskID        string   `json:"task_id,omitempty" jsonschema:"the spec's id of a generated task, such as 1.2"`
	Name          string   `json:"name"`
	Purpose       string   `json:"purpose,omitempty"`
	File          string   `json:"file"`
	EstimatedTime string   `json:"estimated_time,omitempty"`
	Dependencies  []string `json:"dependencies,omitempty"`
	FromSearch    bool     `json:"from_search,omitempty" jsonschema:"the task file is missing: get_task answers from the standards search"`
}

// phaseView builds the view of phase n of r, reading its overview now.
func (e *Engine) phaseView(ctx context.Context, r run, n int, s *Session) (*PhaseView, error) {
	p, ok := r.phase(n)
	if !ok {
		return nil, r.phaseNotFound(n)
	}
	v := &PhaseView{
		PhaseNumber: p.Number, PhaseName: p.Name, Purpose: p.Purpose, EstimatedEffort: p.EstimatedEffort,
		KeyDeliverables: nonNil(p.KeyDeliverables), ValidationCriteria: nonNil(p.ValidationCriteria),
		Skippable: p.Skippable, SkipCondition: p.SkipCondition, Tasks: []TaskSummary{}, Gate: p.Gate,
	}
	var err error
	v.Content, v.Source, v.Warnings, err = e.phaseContent(ctx, r.w, p)
	if err != nil {
		return nil, err
	}
	for _, t := range p.Tasks {
		ts := TaskSummary{TaskNumber: t.Number, Name: t.Name, Purpose: t.Purpose, File: t.File, FromSearch: t.Missing}
		if g := t.Generated; g != nil {
			ts.TaskID, ts.EstimatedTime, ts.Dependencies = g.ID, g.EstimatedTime, g.Dependencies
		}
		v.Tasks = append(v.Tasks, ts)
	}
	if s != nil {
		if c, ok := s.Checkpoints[phaseKey(n)]; ok {
			v.Checkpoint = &c
		}
	}
	return v, nil
}

// phaseContent reads a phase's overview: its file, its rendered template,
// or, when the file is missing, what the standards search finds for it.
func (e *Engine) phaseContent(ctx context.Context, w *definition.Workflow, p *definition.Phase) (content, source string, warns []string, err error) {
	switch {
	case p.Generated != nil:
		tmpl, err := w.ReadFile(p.File)
		if err != nil {
			return "", "", nil, readError(w, p.File, err)
		}
		content, err := dynamic.RenderPhase(ctx, tmpl, *p.Generated, p.Number)
		if err != nil {
			return "", "", nil, renderError(w, p.File, err)
		}
		return content, SourceTemplate, nil, nil
	case !p.Missing:
		content, err := w.ReadFile(p.File)
		if err != nil {
			return "", "", nil, readError(w, p.File, err)
		}
		return content, SourceFile, nil, nil
	}
	query := fmt.Sprintf("%s phase %d %s %s", w.Type, p.Number, p.Name, p.Purpose)
	found, ok, why := e.fromSearch(ctx, query)
	warn := fmt.Sprintf("%s is missing from workflow %q", p.File, w.Type)
	if !ok {
		return overviewFromMetadata(p), SourceSearch, []string{warn + "; " + why + ": the overview below is built from metadata.json"}, nil
	}
	return found, SourceSearch, []string{warn + ": the content below is what the standards search found for this phase"}, nil
}

// overviewFromMetadata writes a phase overview from what metadata says.
func overviewFromMetadata(p *definition.Phase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Phase %d: %s\n", p.Number, p.Name)
	if p.Purpose != "" {
		fmt.Fprintf(&b, "\n%s\n", p.Purpose)
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	list("Key deliverables", p.KeyDeliverables)
	list("Validation criteria", p.ValidationCriteria)
	var tasks []string
	for _, t := range p.Tasks {
		tasks = append(tasks, fmt.Sprintf("Task %d: %s", t.Number, t.Name))
	}
	list("Tasks", tasks)
	return b.String()
}

// renderError is a template that cannot be rendered: too large a result,
// or the request's end.
func renderError(w *definition.Workflow, file string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return newError(ErrContentTooLarge, "shorten "+file+" of workflow "+w.Type+", or the text of the spec it renders",
		"render %s of workflow %q: %v", file, w.Type, err)
}

func readError(w *definition.Workflow, file string, err error) error {
	return newError(ErrWorkflowBroken, "restore the file, or fix the workflow definition",
		"read %s of workflow %q: %v", file, w.Type, err)
}

// WorkflowInfo describes one workflow definition.
type WorkflowInfo struct {
	WorkflowType      string         `json:"workflow_type"`
	Version           string         `json:"version,omitempty"`
	Description       string         `json:"description,omitempty"`
	Category          string         `json:"category,omitempty"`
	Status            string         `json:"status" jsonschema:"ready or broken"`
	TotalPhases       int            `json:"total_phases" jsonschema:"the number of phases; for a dynamic workflow, of its static phases (the spec adds the rest)"`
	FirstPhase        int            `json:"first_phase"`
	Dynamic           bool           `json:"dynamic" jsonschema:"phases after the static ones are generated at start from a source named in the options"`
	DynamicSource     string         `json:"dynamic_source,omitempty" jsonschema:"the start option a dynamic workflow needs, such as options.spec_path"`
	EstimatedDuration string         `json:"estimated_duration,omitempty"`
	PrimaryOutputs    []string       `json:"primary_outputs"`
	Phases            []PhaseSummary `json:"phases"`
	Error             string         `json:"error,omitempty"`
	Warnings          []string       `json:"warnings"`
}

// PhaseSummary is a phase in a workflow listing or overview.
type PhaseSummary struct {
	PhaseNumber int    `json:"phase_number"`
	PhaseRange  string `json:"phase_range,omitempty" jsonschema:"for the entry standing for a dynamic workflow's generated phases: their range, such as 1-N"`
	PhaseName   string `json:"phase_name"`
	Purpose     string `json:"purpose,omitempty"`
	Tasks       int    `json:"tasks"`
	Strict      bool   `json:"strict" jsonschema:"whether the phase's gate blocks on failed checks"`
	Skippable   bool   `json:"skippable,omitempty"`
	Generated   bool   `json:"generated,omitempty" jsonschema:"the phase was generated from the spec"`
}

// Workflow statuses in listings.
const (
	WorkflowReady  = "ready"
	WorkflowBroken = "broken"
)

func phaseSummary(p *definition.Phase) PhaseSummary {
	return PhaseSummary{
		PhaseNumber: p.Number, PhaseName: p.Name, Purpose: p.Purpose, Tasks: len(p.Tasks),
		Strict: p.Gate != nil && p.Gate.Strict, Skippable: p.Skippable, Generated: p.Generated != nil,
	}
}

func workflowInfo(w *definition.Workflow) WorkflowInfo {
	info := WorkflowInfo{
		WorkflowType: w.Type, Version: string(w.Meta.Version), Description: string(w.Meta.Description),
		Category: w.Meta.Category, Status: WorkflowReady, TotalPhases: w.TotalPhases(), FirstPhase: w.FirstPhase,
		Dynamic: w.IsDynamic(), EstimatedDuration: string(w.Meta.EstimatedDuration), PrimaryOutputs: definition.Texts(w.Meta.PrimaryOutputs),
		Phases: []PhaseSummary{}, Warnings: nonNil(w.Warnings),
	}
	if w.Err != nil {
		info.Status, info.Error = WorkflowBroken, oneLine(w.Err)
	}
	for i := range w.Phases {
		info.Phases = append(info.Phases, phaseSummary(&w.Phases[i]))
	}
	if d := w.Dynamic; d != nil {
		info.DynamicSource = "options." + d.SourceKey
		block := PhaseSummary{PhaseNumber: w.FirstPhase + len(w.Phases), PhaseRange: d.Range, PhaseName: "Phases from the spec", Generated: true, Strict: true}
		if block.PhaseRange == "" {
			block.PhaseRange = fmt.Sprintf("%d-N", block.PhaseNumber)
		}
		if d.Block != nil {
			block.PhaseName, block.Purpose = d.Block.Name, d.Block.Purpose
		}
		info.Phases = append(info.Phases, block)
	}
	return info
}

// Overview is a workflow as one session runs it: every phase by number and
// name, generated phases included.
type Overview struct {
	WorkflowType      string         `json:"workflow_type"`
	Version           string         `json:"version,omitempty"`
	Description       string         `json:"description,omitempty"`
	EstimatedDuration string         `json:"estimated_duration,omitempty"`
	PrimaryOutputs    []string       `json:"primary_outputs"`
	FirstPhase        int            `json:"first_phase"`
	TotalPhases       int            `json:"total_phases"`
	Phases            []PhaseSummary `json:"phases"`
}

func overview(r run) *Overview {
	o := &Overview{
		WorkflowType: r.w.Type, Version: string(r.w.Meta.Version), Description: string(r.w.Meta.Description),
		EstimatedDuration: string(r.w.Meta.EstimatedDuration), PrimaryOutputs: definition.Texts(r.w.Meta.PrimaryOutputs),
		FirstPhase: r.first(), TotalPhases: r.total(), Phases: []PhaseSummary{},
	}
	for _, p := range r.phases() {
		o.Phases = append(o.Phases, phaseSummary(&p))
	}
	return o
}

// SessionSummary is a session in a listing: enough for a table row.
type SessionSummary struct {
	SessionID    string `json:"session_id"`
	WorkflowType string `json:"workflow_type"`
	TargetFile   string `json:"target_file"`
	Status       string `json:"status"`
	CurrentPhase int    `json:"current_phase"`
	TotalPhases  int    `json:"total_phases"`
	Progress     string `json:"progress" jsonschema:"completed phases / total phases"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	Imported     bool   `json:"imported"`
	Worktree     string `json:"worktree,omitempty" jsonschema:"the root of the git worktree the session started in"`
	Branch       string `json:"branch,omitempty" jsonschema:"the branch checked out there when the session started"`
	// LastCheckpoint is the phase whose evidence was submitted last.
	LastCheckpoint *LastCheckpoint `json:"last_checkpoint,omitempty" jsonschema:"the phase whose evidence was submitted last, its checkpoint and when"`
	// Project, ReadOnly and Mounted are set in listings of scope repository.
	Project  string `json:"project,omitempty" jsonschema:"with scope repository: the id of the project (worktree) the session belongs to"`
	ReadOnly bool   `json:"read_only,omitempty" jsonschema:"a sibling worktree's session: readable here, advanced only through that worktree's Berth endpoint"`
	Mounted  *bool  `json:"mounted,omitempty" jsonschema:"with scope repository: whether the session's worktree is served by the broker now"`
}

// LastCheckpoint is the last phase evidence was submitted for.
type LastCheckpoint struct {
	Phase  int              `json:"phase"`
	Status CheckpointStatus `json:"status"`
	At     string           `json:"at"`
}

func sessionSummary(s *Session) SessionSummary {
	sum := SessionSummary{
		SessionID: s.SessionID, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile, Status: s.Status,
		CurrentPhase: s.CurrentPhase, TotalPhases: s.TotalPhases, Progress: s.progress(),
		CreatedAt: timeText(s.CreatedAt), UpdatedAt: timeText(s.UpdatedAt), Imported: s.ImportedFrom != "",
		Worktree: s.Worktree, Branch: s.Branch,
	}
	var at time.Time
	for k, a := range s.PhaseArtifacts {
		n, err := strconv.Atoi(k)
		if err != nil || a.Timestamp.IsZero() || a.Timestamp.Before(at) || (a.Timestamp.Equal(at) && n < sum.LastCheckpoint.Phase) {
			continue
		}
		at = a.Timestamp
		sum.LastCheckpoint = &LastCheckpoint{Phase: n, Status: s.Checkpoints[k], At: timeText(at)}
	}
	return sum
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sessionNotFound(id string) error {
	return newError(ErrSessionNotFound, "call list_workflow_sessions for this project's sessions, or start_workflow to begin one",
		"session %q not found in this project", id)
}
