package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits on what an imported session keeps of its file's metadata: only
// what the engine uses (total_phases, and the start options praxis-os kept
// there, such as spec_path), as small values.
const (
	maxMetadataKeys      = 64
	maxMetadataTextBytes = 4 << 10
	maxMetadataListItems = 64
)

// praxisFile is a praxis-os session file as decoded once: each part kept
// as its JSON text until the engine reads what it uses of it, so that
// what it does not use (nested metadata, unknown keys) is never built
// into values.
type praxisFile struct {
	SessionID       json.RawMessage `json:"session_id"`
	WorkflowType    json.RawMessage `json:"workflow_type"`
	TargetFile      json.RawMessage `json:"target_file"`
	CurrentPhase    json.RawMessage `json:"current_phase"`
	CompletedPhases json.RawMessage `json:"completed_phases"`
	PhaseArtifacts  json.RawMessage `json:"phase_artifacts"`
	Checkpoints     json.RawMessage `json:"checkpoints"`
	CreatedAt       json.RawMessage `json:"created_at"`
	UpdatedAt       json.RawMessage `json:"updated_at"`
	Metadata        json.RawMessage `json:"metadata"`
	TotalPhases     json.RawMessage `json:"total_phases"`
	Status          json.RawMessage `json:"status"`
}

// maxMembers bounds the entries read of each of a session file's
// objects and lists (phases, checkpoints, metadata keys).
const maxMembers = 1000

// eachMember calls fn with each key and value of the JSON object raw, one
// at a time (no map of them all is built), up to maxMembers; nothing when
// raw is not an object.
func eachMember(raw json.RawMessage, fn func(key string, v json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for n := 0; n < maxMembers && dec.More(); n++ {
		t, err := dec.Token()
		key, ok := t.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return
		}
		fn(key, v)
	}
}

// eachItem calls fn with each item of the JSON list raw, up to maxMembers.
func eachItem(raw json.RawMessage, fn func(v json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return
	}
	for n := 0; n < maxMembers && dec.More(); n++ {
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return
		}
		fn(v)
	}
}

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
//   - metadata: an object; its total_phases (or a top-level total_phases)
//     gives the number of phases, and its small values (text, numbers,
//     booleans, short lists of text: the start options praxis-os kept
//     there) are kept, the rest dropped (see trimmedMetadata)
//
// Each object and list is read an entry at a time, up to maxMembers
// entries (no map of a hostile file's hundred thousand keys is built).
//   - status: "completed" marks the session complete whatever the counters say
//
// Unknown keys are ignored. A file that is not a JSON object, or lacks
// workflow_type or current_phase, is an error.
func parsePraxisState(name string, data []byte, mtime time.Time) (*Session, error) {
	var f praxisFile
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	s := &Session{Status: StatusActive}
	id := textOf(f.SessionID)
	if id == "" {
		id = strings.TrimSuffix(name, ".json")
	}
	if checkSessionID(id) != nil {
		return nil, fmt.Errorf("session_id %q is not usable as an id", short(id))
	}
	s.SessionID = id
	if s.WorkflowType = textOf(f.WorkflowType); s.WorkflowType == "" {
		return nil, errors.New("workflow_type is missing")
	}
	s.TargetFile = textOf(f.TargetFile)
	cur, ok := intOf(valueOf(f.CurrentPhase))
	if !ok || cur < 0 {
		return nil, errors.New("current_phase is missing or not a whole number")
	}
	s.CurrentPhase = cur
	eachItem(f.CompletedPhases, func(raw json.RawMessage) {
		if n, ok := intOf(valueOf(raw)); ok && n >= 0 && !slices.Contains(s.CompletedPhases, n) {
			s.CompletedPhases = append(s.CompletedPhases, n)
		}
	})
	slices.Sort(s.CompletedPhases)
	s.PhaseArtifacts = praxisArtifacts(f.PhaseArtifacts, mtime)
	s.Checkpoints = praxisCheckpoints(f.Checkpoints)
	s.CreatedAt = timeOf(valueOf(f.CreatedAt), mtime)
	s.UpdatedAt = timeOf(valueOf(f.UpdatedAt), mtime)
	s.Metadata = trimmedMetadata(f.Metadata)
	s.TotalPhases, _ = intOf(s.Metadata["total_phases"])
	if s.TotalPhases == 0 {
		s.TotalPhases, _ = intOf(valueOf(f.TotalPhases))
	}
	s.TotalPhases = max(s.TotalPhases, 0)
	s.FirstPhase = 1
	if cur == 0 || slices.Contains(s.CompletedPhases, 0) {
		s.FirstPhase = 0
	}
	s.updateStatus()
	if st := textOf(f.Status); strings.EqualFold(st, "completed") || strings.EqualFold(st, "complete") {
		s.Status = StatusCompleted
	}
	s.normalize()
	return s, nil
}

// valueOf decodes a scalar (a number or a string); nil for anything else.
func valueOf(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// textOf decodes a string; "" for anything else.
func textOf(raw json.RawMessage) string {
	s, _ := valueOf(raw).(string)
	return s
}

// trimmedMetadata keeps the small values of metadata: text up to
// maxMetadataTextBytes, numbers, booleans, lists of up to
// maxMetadataListItems such texts; at most maxMetadataKeys of them.
// Nested objects and everything larger are dropped: the engine reads only
// total_phases and the start options praxis-os kept there.
func trimmedMetadata(raw json.RawMessage) map[string]any {
	out := map[string]any{}
	eachMember(raw, func(k string, v json.RawMessage) {
		if len(out) >= maxMetadataKeys && k != "total_phases" || len(k) > maxMetadataTextBytes {
			return
		}
		v = bytes.TrimSpace(v)
		switch {
		case len(v) > maxMetadataTextBytes*maxMetadataListItems:
		case len(v) > 0 && v[0] == '[':
			var list []string
			if json.Unmarshal(v, &list) == nil && len(list) <= maxMetadataListItems && !slices.ContainsFunc(list, func(s string) bool { return len(s) > maxMetadataTextBytes }) {
				items := make([]any, len(list))
				for i, s := range list {
					items[i] = s
				}
				out[k] = items
			}
		case len(v) <= maxMetadataTextBytes:
			switch x := valueOf(v).(type) {
			case string, float64, bool:
				out[k] = x
			}
		}
	})
	return out
}

func praxisArtifacts(raw json.RawMessage, mtime time.Time) map[string]Artifact {
	out := map[string]Artifact{}
	eachMember(raw, func(k string, v json.RawMessage) {
		n, ok := intOf(k)
		if !ok {
			return
		}
		var obj struct {
			Evidence  json.RawMessage `json:"evidence"`
			Outputs   json.RawMessage `json:"outputs"`
			Timestamp json.RawMessage `json:"timestamp"`
		}
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' || json.Unmarshal(v, &obj) != nil {
			return
		}
		a := Artifact{Timestamp: timeOf(valueOf(obj.Timestamp), mtime)}
		_ = json.Unmarshal(obj.Evidence, &a.Evidence)
		_ = json.Unmarshal(obj.Outputs, &a.Outputs)
		out[phaseKey(n)] = a
	})
	return out
}

func praxisCheckpoints(raw json.RawMessage) map[string]CheckpointStatus {
	out := map[string]CheckpointStatus{}
	eachMember(raw, func(k string, v json.RawMessage) {
		n, ok := intOf(k)
		st := textOf(v)
		if !ok || st == "" {
			return
		}
		switch c := CheckpointStatus(strings.ToLower(st)); c {
		case CheckpointPending, CheckpointPassed, CheckpointFailed, CheckpointSkipped:
			out[phaseKey(n)] = c
		}
	})
	return out
}

// short cuts s for a message.
func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
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
