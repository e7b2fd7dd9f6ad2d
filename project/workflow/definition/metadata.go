package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits that keep a hostile or mistaken definition from costing much.
const (
	maxPhases        = 1000
	maxTasksPerPhase = 1000
)

// Metadata is a workflow's metadata.json. Unknown keys are ignored.
type Metadata struct {
	WorkflowType      string      `json:"workflow_type"`
	Version           Text        `json:"version"`
	TotalPhases       TotalPhases `json:"total_phases"`
	Description       string      `json:"description,omitempty"`
	Category          string      `json:"category,omitempty"`
	EstimatedDuration Text        `json:"estimated_duration,omitempty"`
	PrimaryOutputs    []Text      `json:"primary_outputs,omitempty"`
	Phases            []PhaseMeta `json:"phases"`
	// DynamicPhases marks a praxis-os hybrid workflow whose phase content is
	// generated from templates; Berth treats it like total_phases "dynamic".
	DynamicPhases bool `json:"dynamic_phases,omitempty"`
}

// Dynamic reports whether the workflow's phases are generated at run time.
func (m Metadata) Dynamic() bool { return m.TotalPhases.Dynamic || m.DynamicPhases }

// PhaseMeta is one entry of metadata's phases[].
type PhaseMeta struct {
	PhaseNumber        int        `json:"phase_number"`
	PhaseName          string     `json:"phase_name"`
	Purpose            string     `json:"purpose"`
	EstimatedEffort    Text       `json:"estimated_effort,omitempty"`
	KeyDeliverables    []Text     `json:"key_deliverables,omitempty"`
	ValidationCriteria []Text     `json:"validation_criteria,omitempty"`
	Tasks              []TaskMeta `json:"tasks,omitempty"`
}

// TaskMeta is one entry of a phase's tasks[].
type TaskMeta struct {
	TaskNumber int    `json:"task_number"`
	Name       string `json:"name"`
	File       string `json:"file"`
	Purpose    string `json:"purpose,omitempty"`
}

// TotalPhases is metadata's total_phases: a count, or "dynamic".
type TotalPhases struct {
	Count   int
	Dynamic bool
}

// UnmarshalJSON accepts a non-negative integer, a string holding one, or "dynamic".
func (t *TotalPhases) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if strings.EqualFold(strings.TrimSpace(s), "dynamic") {
			*t = TotalPhases{Dynamic: true}
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("total_phases %q is neither a number nor \"dynamic\"", s)
		}
		*t = TotalPhases{Count: n}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f != float64(int(f)) {
		return fmt.Errorf("total_phases %s is neither a whole number nor \"dynamic\"", b)
	}
	*t = TotalPhases{Count: int(f)}
	return nil
}

// MarshalJSON writes the count, or "dynamic".
func (t TotalPhases) MarshalJSON() ([]byte, error) {
	if t.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	return strconv.AppendInt(nil, int64(t.Count), 10), nil
}

// Text is a descriptive value that praxis-os files hold as a string but
// sometimes as a number or a small object; anything that is not a string is
// kept as its compact JSON.
type Text string

// UnmarshalJSON accepts any JSON value.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*t = ""
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*t = Text(buf.String())
	return nil
}

// Texts converts a list of Text to plain strings (never nil).
func Texts(ts []Text) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, string(t))
	}
	return out
}

// rawPhase and rawTask detect missing numbers, which the public types cannot.
type rawPhase struct {
	PhaseNumber *int      `json:"phase_number"`
	Tasks       []rawTask `json:"tasks"`
}

type rawTask struct {
	TaskNumber *int `json:"task_number"`
}

type rawMetadata struct {
	TotalPhases *json.RawMessage `json:"total_phases"`
	Phases      []rawPhase       `json:"phases"`
}

// ParseMetadata decodes and checks a metadata.json document. It checks what
// can be known without the files: total_phases, phase and task numbering, and
// that task file names stay inside their phase folder.
func ParseMetadata(data []byte) (Metadata, error) {
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return Metadata{}, jsonError(data, err)
	}
	var raw rawMetadata
	if err := json.Unmarshal(data, &raw); err != nil {
		return Metadata{}, jsonError(data, err)
	}
	if raw.TotalPhases == nil || bytes.Equal(*raw.TotalPhases, []byte("null")) {
		return Metadata{}, errors.New(`total_phases is missing (a number of phases, or "dynamic")`)
	}
	if !m.Dynamic() && (m.TotalPhases.Count < 1 || m.TotalPhases.Count > maxPhases) {
		return Metadata{}, fmt.Errorf("total_phases %d is out of range (1-%d)", m.TotalPhases.Count, maxPhases)
	}
	if len(m.Phases) > maxPhases {
		return Metadata{}, fmt.Errorf("phases lists %d entries; at most %d are allowed", len(m.Phases), maxPhases)
	}
	seen := make(map[int]bool, len(m.Phases))
	for i, p := range raw.Phases {
		if p.PhaseNumber == nil {
			return Metadata{}, fmt.Errorf("phases[%d]: phase_number is missing", i)
		}
		n := *p.PhaseNumber
		if n < 0 {
			return Metadata{}, fmt.Errorf("phases[%d]: phase_number %d is negative", i, n)
		}
		if seen[n] {
			return Metadata{}, fmt.Errorf("phases[%d]: phase %d is listed twice", i, n)
		}
		seen[n] = true
		if err := checkTasks(n, p.Tasks, m.Phases[i].Tasks); err != nil {
			return Metadata{}, fmt.Errorf("phases[%d] (phase %d): %w", i, n, err)
		}
	}
	return m, nil
}

func checkTasks(phase int, raw []rawTask, tasks []TaskMeta) error {
	if len(tasks) > maxTasksPerPhase {
		return fmt.Errorf("%d tasks; at most %d are allowed", len(tasks), maxTasksPerPhase)
	}
	seen := make(map[int]bool, len(tasks))
	for j, t := range raw {
		if t.TaskNumber == nil {
			return fmt.Errorf("tasks[%d]: task_number is missing", j)
		}
		k := *t.TaskNumber
		if k < 1 {
			return fmt.Errorf("tasks[%d]: task_number %d must be 1 or more", j, k)
		}
		if seen[k] {
			return fmt.Errorf("tasks[%d]: task %d is listed twice", j, k)
		}
		seen[k] = true
		if f := tasks[j].File; f != "" && !isPlainName(f) {
			return fmt.Errorf("tasks[%d]: file %q must be a file name inside phases/%d/", j, f, phase)
		}
	}
	return nil
}

// isPlainName reports whether name is a single local file name.
func isPlainName(name string) bool {
	return name != "" && filepath.IsLocal(name) && !strings.ContainsAny(name, `/\:`) && name != "." && name != ".."
}

// jsonError names the line and column of a syntax or type error.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
}
