package workflow

import (
	"slices"
	"strconv"
	"time"
)

// CheckpointStatus is the outcome recorded for a phase's gate.
type CheckpointStatus string

// Checkpoint statuses, as praxis-os names them.
const (
	CheckpointPending CheckpointStatus = "pending"
	CheckpointPassed  CheckpointStatus = "passed"
	CheckpointFailed  CheckpointStatus = "failed"
	CheckpointSkipped CheckpointStatus = "skipped"
)

// Session statuses.
const (
	StatusActive    = "active"
	StatusCompleted = "completed"
)

// Session is one run of a workflow on a target, as stored. Maps are keyed by
// the phase number in decimal, as in JSON.
type Session struct {
	SessionID       string                      `json:"session_id"`
	WorkflowType    string                      `json:"workflow_type"`
	TargetFile      string                      `json:"target_file"`
	CurrentPhase    int                         `json:"current_phase"`
	CompletedPhases []int                       `json:"completed_phases"`
	PhaseArtifacts  map[string]Artifact         `json:"phase_artifacts"`
	Checkpoints     map[string]CheckpointStatus `json:"checkpoints"`
	CreatedAt       time.Time                   `json:"created_at"`
	UpdatedAt       time.Time                   `json:"updated_at"`
	// TotalPhases is the number of phases; 0 when unknown (an imported
	// session whose workflow is not defined here).
	TotalPhases int    `json:"total_phases"`
	FirstPhase  int    `json:"first_phase"`
	Status      string `json:"status"`
	// Options are the options given to start_workflow.
	Options map[string]any `json:"options,omitempty"`
	// Metadata is kept from an imported praxis-os session.
	Metadata map[string]any `json:"metadata,omitempty"`
	// ImportedFrom names the praxis-os state file the session came from.
	ImportedFrom string `json:"imported_from,omitempty"`
	// SkippedPhases are the phases skipped (also listed as completed).
	SkippedPhases []int `json:"skipped_phases,omitempty"`
	// Plan holds a dynamic workflow's generated phases, as its source gave
	// them when the session started (nil for static workflows).
	Plan *Plan `json:"plan,omitempty"`
	// Worktree, Branch and Commit are what the project's git worktree had
	// checked out when the session started: its root, its branch (empty
	// when detached) and commit. All empty for a project in no repository
	// and for sessions started before Berth recorded them.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Commit   string `json:"commit,omitempty"`
}

// Artifact is the evidence last submitted for a phase.
type Artifact struct {
	Evidence  map[string]any `json:"evidence"`
	Timestamp time.Time      `json:"timestamp"`
	// Attempts counts complete_phase calls for the phase.
	Attempts int `json:"attempts,omitempty"`
	// Outputs is kept from an imported praxis-os artifact.
	Outputs map[string]any `json:"outputs,omitempty"`
}

func phaseKey(n int) string { return strconv.Itoa(n) }

// lastPhase is the number of the final phase, or -1 when unknown.
func (s *Session) lastPhase() int {
	if s.TotalPhases <= 0 {
		return -1
	}
	return s.FirstPhase + s.TotalPhases - 1
}

// updateStatus derives Status from the phase counters.
func (s *Session) updateStatus() {
	if last := s.lastPhase(); last >= 0 && s.CurrentPhase > last {
		s.Status = StatusCompleted
		return
	}
	s.Status = StatusActive
}

// complete reports whether every phase is done.
func (s *Session) complete() bool { return s.Status == StatusCompleted }

func (s *Session) hasCompleted(phase int) bool { return slices.Contains(s.CompletedPhases, phase) }

// skip records phase (the current one) as skipped and moves on.
func (s *Session) skip(phase int) {
	s.Checkpoints[phaseKey(phase)] = CheckpointSkipped
	s.CompletedPhases = append(s.CompletedPhases, phase)
	s.SkippedPhases = append(s.SkippedPhases, phase)
	s.CurrentPhase = phase + 1
	s.updateStatus()
}

// normalize fills nil maps and slices so that stored and returned JSON has
// objects and lists, never null.
func (s *Session) normalize() {
	if s.CompletedPhases == nil {
		s.CompletedPhases = []int{}
	}
	if s.PhaseArtifacts == nil {
		s.PhaseArtifacts = map[string]Artifact{}
	}
	if s.Checkpoints == nil {
		s.Checkpoints = map[string]CheckpointStatus{}
	}
	for k, a := range s.PhaseArtifacts {
		if a.Evidence == nil {
			a.Evidence = map[string]any{}
			s.PhaseArtifacts[k] = a
		}
	}
}

// progress is "completed/total", or "completed/?" when the total is unknown.
func (s *Session) progress() string {
	total := "?"
	if s.TotalPhases > 0 {
		total = strconv.Itoa(s.TotalPhases)
	}
	return strconv.Itoa(len(s.CompletedPhases)) + "/" + total
}

// timeText formats t as RFC 3339 UTC, or "" for the zero time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
