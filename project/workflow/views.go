package workflow

import "github.com/berth-dev/berth/project/workflow/definition"

// PhaseView is a phase as clients see it: its overview content, its tasks
// and the gate its evidence must pass.
type PhaseView struct {
	PhaseNumber        int               `json:"phase_number"`
	PhaseName          string            `json:"phase_name"`
	Purpose            string            `json:"purpose,omitempty"`
	EstimatedEffort    string            `json:"estimated_effort,omitempty"`
	KeyDeliverables    []string          `json:"key_deliverables"`
	ValidationCriteria []string          `json:"validation_criteria"`
	Content            string            `json:"content" jsonschema:"the phase overview (phase.md)"`
	Tasks              []TaskSummary     `json:"tasks"`
	Gate               *definition.Gate  `json:"gate" jsonschema:"the checkpoint: evidence fields and whether the gate is strict"`
	Checkpoint         *CheckpointStatus `json:"checkpoint,omitempty"`
}

// TaskSummary names one task of a phase; get_task returns its content.
type TaskSummary struct {
	TaskNumber int    `json:"task_number"`
	Name       string `json:"name"`
	Purpose    string `json:"purpose,omitempty"`
	File       string `json:"file"`
}

// phaseView builds the view of phase n of w, reading phase.md from disk.
func phaseView(w *definition.Workflow, n int, s *Session) (*PhaseView, error) {
	p, ok := w.Phase(n)
	if !ok {
		return nil, newError(ErrPhaseNotFound, "the workflow definition changed under the session; list its phases with list_workflows",
			"workflow %q has no phase %d", w.Type, n)
	}
	content, err := w.ReadFile(p.File)
	if err != nil {
		return nil, newError(ErrWorkflowBroken, "restore the file, or fix the workflow definition",
			"read %s of workflow %q: %v", p.File, w.Type, err)
	}
	v := &PhaseView{
		PhaseNumber: p.Number, PhaseName: p.Name, Purpose: p.Purpose, EstimatedEffort: p.EstimatedEffort,
		KeyDeliverables: nonNil(p.KeyDeliverables), ValidationCriteria: nonNil(p.ValidationCriteria),
		Content: content, Tasks: []TaskSummary{}, Gate: p.Gate,
	}
	for _, t := range p.Tasks {
		v.Tasks = append(v.Tasks, TaskSummary{TaskNumber: t.Number, Name: t.Name, Purpose: t.Purpose, File: t.File})
	}
	if s != nil {
		if c, ok := s.Checkpoints[phaseKey(n)]; ok {
			v.Checkpoint = &c
		}
	}
	return v, nil
}

// WorkflowInfo describes one workflow definition.
type WorkflowInfo struct {
	WorkflowType      string         `json:"workflow_type"`
	Version           string         `json:"version,omitempty"`
	Description       string         `json:"description,omitempty"`
	Category          string         `json:"category,omitempty"`
	Status            string         `json:"status" jsonschema:"ready, broken or dynamic (listed, cannot be started)"`
	TotalPhases       int            `json:"total_phases"`
	FirstPhase        int            `json:"first_phase"`
	EstimatedDuration string         `json:"estimated_duration,omitempty"`
	PrimaryOutputs    []string       `json:"primary_outputs"`
	Phases            []PhaseSummary `json:"phases"`
	Error             string         `json:"error,omitempty"`
	Warnings          []string       `json:"warnings"`
}

// PhaseSummary is a phase in a workflow listing.
type PhaseSummary struct {
	PhaseNumber int    `json:"phase_number"`
	PhaseName   string `json:"phase_name"`
	Purpose     string `json:"purpose,omitempty"`
	Tasks       int    `json:"tasks"`
	Strict      bool   `json:"strict" jsonschema:"whether the phase's gate blocks on failed checks"`
}

// Workflow statuses in listings.
const (
	WorkflowReady   = "ready"
	WorkflowBroken  = "broken"
	WorkflowDynamic = "dynamic"
)

func workflowInfo(w *definition.Workflow) WorkflowInfo {
	info := WorkflowInfo{
		WorkflowType: w.Type, Version: string(w.Meta.Version), Description: w.Meta.Description,
		Category: w.Meta.Category, Status: WorkflowReady, TotalPhases: w.TotalPhases(), FirstPhase: w.FirstPhase,
		EstimatedDuration: string(w.Meta.EstimatedDuration), PrimaryOutputs: definition.Texts(w.Meta.PrimaryOutputs),
		Phases: []PhaseSummary{}, Warnings: nonNil(w.Warnings),
	}
	switch {
	case w.Err != nil:
		info.Status, info.Error = WorkflowBroken, oneLine(w.Err)
	case w.Dynamic():
		info.Status = WorkflowDynamic
	}
	for _, p := range w.Phases {
		info.Phases = append(info.Phases, PhaseSummary{
			PhaseNumber: p.Number, PhaseName: p.Name, Purpose: p.Purpose, Tasks: len(p.Tasks), Strict: p.Gate != nil && p.Gate.Strict,
		})
	}
	return info
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
}

func sessionSummary(s *Session) SessionSummary {
	return SessionSummary{
		SessionID: s.SessionID, WorkflowType: s.WorkflowType, TargetFile: s.TargetFile, Status: s.Status,
		CurrentPhase: s.CurrentPhase, TotalPhases: s.TotalPhases, Progress: s.progress(),
		CreatedAt: timeText(s.CreatedAt), UpdatedAt: timeText(s.UpdatedAt), Imported: s.ImportedFrom != "",
	}
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
