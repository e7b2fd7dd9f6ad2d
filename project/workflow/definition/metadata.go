package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Limits that keep a hostile or mistaken definition from costing much.
const (
	maxPhases        = 1000
	maxTasksPerPhase = 1000
)

// Metadata is a workflow's metadata.json. Unknown keys are ignored, as
// praxis-os ignores them.
type Metadata struct {
	WorkflowType      string      `json:"workflow_type"`
	Version           Text        `json:"version"`
	TotalPhases       TotalPhases `json:"total_phases"`
	Description       Text        `json:"description,omitempty"`
	Category          string      `json:"category,omitempty"`
	EstimatedDuration Text        `json:"estimated_duration,omitempty"`
	PrimaryOutputs    []Text      `json:"primary_outputs,omitempty"`
	Phases            []PhaseMeta `json:"phases"`
	// DynamicPhases marks a workflow whose later phases are generated at
	// start from a source named in the start options (see DynamicConfig).
	DynamicPhases Flag           `json:"dynamic_phases,omitempty"`
	DynamicConfig *DynamicConfig `json:"dynamic_config,omitempty"`
	// StartPhase is praxis-os's hint of the first phase (0 or 1).
	StartPhase *int `json:"start_phase,omitempty"`
}

// Dynamic reports whether the workflow's phases are generated at run time.
func (m Metadata) Dynamic() bool { return m.TotalPhases.Dynamic || bool(m.DynamicPhases) }

// DynamicConfig says where a dynamic workflow's phases come from.
type DynamicConfig struct {
	SourceType string `json:"source_type,omitempty"`
	// SourcePathKey is the start option naming the source (default spec_path).
	SourcePathKey string `json:"source_path_key,omitempty"`
	Templates     struct {
		Phase string `json:"phase,omitempty"`
		Task  string `json:"task,omitempty"`
	} `json:"templates"`
	// Parser is spec_tasks_parser (default) or workflow_definition_parser.
	Parser string `json:"parser,omitempty"`
}

// PhaseMeta is one entry of metadata's phases[].
type PhaseMeta struct {
	PhaseNumber PhaseNumber `json:"phase_number"`
	PhaseName   string      `json:"phase_name"`
	Purpose     Text        `json:"purpose"`
	// File (praxis-os also writes phase_file) names the overview; the
	// default is phases/N/phase.md.
	File               string          `json:"file,omitempty"`
	PhaseFile          string          `json:"phase_file,omitempty"`
	EstimatedEffort    Text            `json:"estimated_effort,omitempty"`
	KeyDeliverables    []Text          `json:"key_deliverables,omitempty"`
	ValidationCriteria []Text          `json:"validation_criteria,omitempty"`
	Skippable          Flag            `json:"skippable,omitempty"`
	SkipCondition      string          `json:"skip_condition,omitempty"`
	Checkpoint         *MetaCheckpoint `json:"checkpoint,omitempty"`
	Tasks              []TaskMeta      `json:"tasks,omitempty"`
}

// overview is the phase overview file the entry names, or "".
func (pm PhaseMeta) overview() string {
	if pm.File != "" {
		return pm.File
	}
	return pm.PhaseFile
}

// MetaCheckpoint is a phase's checkpoint as metadata.json may state it.
type MetaCheckpoint struct {
	RequiredEvidence RequiredEvidence `json:"required_evidence"`
}

// TaskMeta is one entry of a phase's tasks[].
type TaskMeta struct {
	TaskNumber int    `json:"task_number"`
	Name       string `json:"name"`
	File       string `json:"file"`
	Purpose    Text   `json:"purpose,omitempty"`
}

// rawPhase and rawTask detect missing numbers, which the public types cannot.
type rawPhase struct {
	PhaseNumber *json.RawMessage `json:"phase_number"`
	Tasks       []rawTask        `json:"tasks"`
}

type rawTask struct {
	TaskNumber *int `json:"task_number"`
}

type rawMetadata struct {
	TotalPhases *json.RawMessage `json:"total_phases"`
	Phases      []rawPhase       `json:"phases"`
}

// ParseMetadata decodes and checks a metadata.json document. It checks what
// can be known without the files. What stops the workflow from running is
// the error; what praxis-os would let pass (a task without a number, a file
// name leaving its folder, a missing total_phases when phases are listed) is
// left out of the result and named in the warnings.
func ParseMetadata(data []byte) (Metadata, []string, error) {
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return Metadata{}, nil, jsonError(data, err)
	}
	var raw rawMetadata
	if err := json.Unmarshal(data, &raw); err != nil {
		return Metadata{}, nil, jsonError(data, err)
	}
	var warns []string
	if len(m.Phases) > maxPhases {
		return Metadata{}, nil, fmt.Errorf("phases lists %d entries; at most %d are allowed", len(m.Phases), maxPhases)
	}
	missingTotal := raw.TotalPhases == nil || bytes.Equal(*raw.TotalPhases, []byte("null"))
	if missingTotal && !m.Dynamic() {
		if len(m.Phases) == 0 {
			return Metadata{}, nil, errors.New(`total_phases is missing (give the number of phases, or "dynamic")`)
		}
		m.TotalPhases = TotalPhases{Count: len(m.Phases)}
		warns = append(warns, fmt.Sprintf("%s has no total_phases; the %d phases it lists are used", MetadataFile, len(m.Phases)))
	}
	if !m.Dynamic() && (m.TotalPhases.Count < 1 || m.TotalPhases.Count > maxPhases) {
		return Metadata{}, nil, fmt.Errorf("total_phases %d is out of range (1-%d)", m.TotalPhases.Count, maxPhases)
	}
	seen := make(map[int]bool, len(m.Phases))
	ranges := 0
	for i, p := range raw.Phases {
		if p.PhaseNumber == nil {
			return Metadata{}, nil, fmt.Errorf("phases[%d]: phase_number is missing (a number, or a range such as \"1-N\" for dynamic phases)", i)
		}
		pn := m.Phases[i].PhaseNumber
		switch {
		case pn.Range != "" && !m.Dynamic():
			return Metadata{}, nil, fmt.Errorf("phases[%d]: phase_number %q stands for dynamic phases, but the workflow is not dynamic: set dynamic_phases to true with a dynamic_config, or number the phase", i, pn.Range)
		case pn.Range != "":
			if ranges++; ranges > 1 {
				return Metadata{}, nil, fmt.Errorf("phases[%d]: a second range %q; one entry stands for all dynamic phases", i, pn.Range)
			}
			continue
		case pn.N < 0:
			return Metadata{}, nil, fmt.Errorf("phases[%d]: phase_number %d is negative", i, pn.N)
		case seen[pn.N]:
			return Metadata{}, nil, fmt.Errorf("phases[%d]: phase %d is listed twice", i, pn.N)
		}
		seen[pn.N] = true
		tasks, tw := checkTasks(pn.N, p.Tasks, m.Phases[i].Tasks)
		m.Phases[i].Tasks = tasks
		for _, w := range tw {
			warns = append(warns, fmt.Sprintf("%s: phases[%d] (phase %d): %s", MetadataFile, i, pn.N, w))
		}
		if f := m.Phases[i].overview(); f != "" && !isLocalPath(f) {
			warns = append(warns, fmt.Sprintf("%s: phases[%d] (phase %d): file %q must be a path inside the workflow folder; phases/%d/%s is read instead", MetadataFile, i, pn.N, f, pn.N, PhaseFile))
			m.Phases[i].File, m.Phases[i].PhaseFile = "", ""
		}
	}
	return m, warns, nil
}

// checkTasks keeps the tasks that can be served and says why others cannot.
func checkTasks(phase int, raw []rawTask, tasks []TaskMeta) ([]TaskMeta, []string) {
	if len(tasks) > maxTasksPerPhase {
		return nil, []string{fmt.Sprintf("%d tasks; at most %d are read", len(tasks), maxTasksPerPhase)}
	}
	var out []TaskMeta
	var warns []string
	seen := make(map[int]bool, len(tasks))
	for j, t := range raw {
		switch {
		case t.TaskNumber == nil:
			warns = append(warns, fmt.Sprintf("tasks[%d] has no task_number: add one, or the task cannot be served", j))
			continue
		case *t.TaskNumber < 0:
			warns = append(warns, fmt.Sprintf("tasks[%d]: task_number %d is negative: the task cannot be served", j, *t.TaskNumber))
			continue
		case seen[*t.TaskNumber]:
			warns = append(warns, fmt.Sprintf("tasks[%d]: task %d is listed twice; the first entry is used", j, *t.TaskNumber))
			continue
		}
		seen[*t.TaskNumber] = true
		tm := tasks[j]
		if tm.File != "" && !isPlainName(tm.File) {
			warns = append(warns, fmt.Sprintf("tasks[%d]: file %q must be a file name inside phases/%d/: it is not read", j, tm.File, phase))
			tm.File = unsafeFile
		}
		out = append(out, tm)
	}
	return out, warns
}

// unsafeFile marks a task whose named file is not read.
const unsafeFile = "\x00unsafe"

// isPlainName reports whether name is a single local file name.
func isPlainName(name string) bool {
	return name != "" && filepath.IsLocal(name) && !strings.ContainsAny(name, `/\:`) && name != "." && name != ".."
}

// isLocalPath reports a slash path that stays inside the workflow folder.
func isLocalPath(p string) bool {
	return p != "" && !strings.ContainsAny(p, `\:`) && filepath.IsLocal(filepath.FromSlash(p))
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
