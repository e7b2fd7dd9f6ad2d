package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parsePraxisState reads one praxis-os session file (.praxis-os/.cache/state/
// <session id>.json) into a Session. The reader is tolerant, since the files
// come from several praxis-os versions. It accepts:
//
//   - session_id: a string; when missing, the file name without .json
//   - workflow_type: a non-empty string (required)
//   - target_file: a string (missing means "")
//   - current_phase: an integer, or a string holding one (required)
//   - completed_phases: a list of integers (entries that are not are dropped)
//   - phase_artifacts: {"N": {evidence: {...}, timestamp, outputs: {...}, ...}};
//     other artifact keys (commands_executed, phase_number) are dropped
//   - checkpoints: {"N": "pending"|"passed"|"failed"|"skipped"}, any case
//   - created_at, updated_at: RFC 3339, or praxis-os' naive ISO form
//     (2025-10-11T13:16:57.123456, read as local time), or unix seconds;
//     missing or unreadable ones fall back to the file's modification time
//   - metadata: an object, kept as is; metadata.total_phases (or a top-level
//     total_phases) gives the number of phases
//   - status: "completed" marks the session complete whatever the counters say
//
// Unknown keys are ignored. A file that is not a JSON object, or lacks
// workflow_type or current_phase, is an error.
func parsePraxisState(name string, data []byte, mtime time.Time) (*Session, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	s := &Session{Status: StatusActive}
	id, _ := m["session_id"].(string)
	if id == "" {
		id = strings.TrimSuffix(name, ".json")
	}
	if checkSessionID(id) != nil {
		return nil, fmt.Errorf("session_id %q is not usable as an id", id)
	}
	s.SessionID = id
	s.WorkflowType, _ = m["workflow_type"].(string)
	if s.WorkflowType == "" {
		return nil, errors.New("workflow_type is missing")
	}
	s.TargetFile, _ = m["target_file"].(string)
	cur, ok := intOf(m["current_phase"])
	if !ok || cur < 0 {
		return nil, errors.New("current_phase is missing or not a whole number")
	}
	s.CurrentPhase = cur
	if list, ok := m["completed_phases"].([]any); ok {
		for _, v := range list {
			if n, ok := intOf(v); ok && n >= 0 && !slices.Contains(s.CompletedPhases, n) {
				s.CompletedPhases = append(s.CompletedPhases, n)
			}
		}
		slices.Sort(s.CompletedPhases)
	}
	s.PhaseArtifacts = praxisArtifacts(m["phase_artifacts"], mtime)
	s.Checkpoints = praxisCheckpoints(m["checkpoints"])
	s.CreatedAt = timeOf(m["created_at"], mtime)
	s.UpdatedAt = timeOf(m["updated_at"], mtime)
	if meta, ok := m["metadata"].(map[string]any); ok {
		s.Metadata = meta
		s.TotalPhases, _ = intOf(meta["total_phases"])
	}
	if s.TotalPhases == 0 {
		s.TotalPhases, _ = intOf(m["total_phases"])
	}
	s.TotalPhases = max(s.TotalPhases, 0)
	s.FirstPhase = 1
	if cur == 0 || slices.Contains(s.CompletedPhases, 0) {
		s.FirstPhase = 0
	}
	s.updateStatus()
	if st, _ := m["status"].(string); strings.EqualFold(st, "completed") || strings.EqualFold(st, "complete") {
		s.Status = StatusCompleted
	}
	s.normalize()
	return s, nil
}

func praxisArtifacts(v any, mtime time.Time) map[string]Artifact {
	out := map[string]Artifact{}
	m, _ := v.(map[string]any)
	for k, raw := range m {
		n, ok := intOf(k)
		obj, isObj := raw.(map[string]any)
		if !ok || !isObj {
			continue
		}
		a := Artifact{Timestamp: timeOf(obj["timestamp"], mtime)}
		a.Evidence, _ = obj["evidence"].(map[string]any)
		a.Outputs, _ = obj["outputs"].(map[string]any)
		out[phaseKey(n)] = a
	}
	return out
}

func praxisCheckpoints(v any) map[string]CheckpointStatus {
	out := map[string]CheckpointStatus{}
	m, _ := v.(map[string]any)
	for k, raw := range m {
		n, ok := intOf(k)
		st, isStr := raw.(string)
		if !ok || !isStr {
			continue
		}
		switch c := CheckpointStatus(strings.ToLower(st)); c {
		case CheckpointPending, CheckpointPassed, CheckpointFailed, CheckpointSkipped:
			out[phaseKey(n)] = c
		}
	}
	return out
}

// intOf reads a whole number from a JSON number or a string holding one.
func intOf(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1e9 {
			return 0, false
		}
		return int(x), true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		return n, err == nil && n > -1e9 && n < 1e9
	}
	return 0, false
}

// praxisTimeLayouts are tried in order; the zone-less ones read local time,
// as Python's naive datetime.isoformat() wrote it.
var praxisTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05",
	"2006-01-02",
}

// timeOf reads a timestamp, falling back to def.
func timeOf(v any, def time.Time) time.Time {
	switch x := v.(type) {
	case string:
		for _, layout := range praxisTimeLayouts {
			if t, err := time.ParseInLocation(layout, strings.TrimSpace(x), time.Local); err == nil {
				return t.UTC()
			}
		}
	case float64:
		if x > 0 && x < 1e11 {
			sec, frac := math.Modf(x)
			return time.Unix(int64(sec), int64(frac*1e9)).UTC()
		}
	}
	return def.UTC()
}
