package definition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

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
	n, err := wholeNumber(b)
	if err != nil {
		return fmt.Errorf("total_phases %s is neither a whole number nor \"dynamic\"", b)
	}
	*t = TotalPhases{Count: n}
	return nil
}

// MarshalJSON writes the count, or "dynamic".
func (t TotalPhases) MarshalJSON() ([]byte, error) {
	if t.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	return strconv.AppendInt(nil, int64(t.Count), 10), nil
}

// PhaseNumber is a phase_number: a number, or a range such as "1-N" that
// stands for the phases a dynamic workflow generates.
type PhaseNumber struct {
	N int
	// Range is the range as written ("1-N"); N is then its first phase.
	Range string
}

var rangeRE = regexp.MustCompile(`^\s*(\d+)\s*[-–]\s*([A-Za-z]+|\*)\s*$`)

// UnmarshalJSON accepts a whole number, a string holding one, or a range.
func (p *PhaseNumber) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			*p = PhaseNumber{N: n}
			return nil
		}
		m := rangeRE.FindStringSubmatch(s)
		if m == nil {
			return fmt.Errorf("phase_number %q is neither a number nor a range such as \"1-N\"", s)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return fmt.Errorf("phase_number %q: %w", s, err)
		}
		*p = PhaseNumber{N: n, Range: strings.TrimSpace(s)}
		return nil
	}
	n, err := wholeNumber(b)
	if err != nil {
		return fmt.Errorf("phase_number %s is neither a whole number nor a range such as \"1-N\"", b)
	}
	*p = PhaseNumber{N: n}
	return nil
}

// MarshalJSON writes the number, or the range.
func (p PhaseNumber) MarshalJSON() ([]byte, error) {
	if p.Range != "" {
		return json.Marshal(p.Range)
	}
	return strconv.AppendInt(nil, int64(p.N), 10), nil
}

func wholeNumber(b []byte) (int, error) {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f != float64(int(f)) || f > 1e9 || f < -1e9 {
		return 0, fmt.Errorf("not a whole number")
	}
	return int(f), nil
}

// Flag is a boolean that praxis-os files sometimes write as "true"/"false".
type Flag bool

// UnmarshalJSON accepts true, false, their strings, and null (false).
func (f *Flag) UnmarshalJSON(b []byte) error {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(string(b)), `"`)) {
	case "true", "yes":
		*f = true
	case "false", "no", "null", "":
		*f = false
	default:
		return fmt.Errorf("%s is not true or false", b)
	}
	return nil
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

// RequiredEvidence is a metadata checkpoint's required_evidence: a list of
// field names, a list of {name, type, description}, or a map of name to
// {type, description} (or to a type name).
type RequiredEvidence []EvidenceField

// EvidenceField is one required evidence field of a metadata checkpoint.
type EvidenceField struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// UnmarshalJSON accepts the shapes listed on RequiredEvidence.
func (r *RequiredEvidence) UnmarshalJSON(b []byte) error {
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err == nil {
		out := RequiredEvidence{}
		for _, item := range list {
			var name string
			if err := json.Unmarshal(item, &name); err == nil && name != "" {
				out = append(out, EvidenceField{Name: name})
				continue
			}
			var f EvidenceField
			if err := json.Unmarshal(item, &f); err != nil || f.Name == "" {
				return fmt.Errorf("required_evidence entries must be field names or {name, type, description}, not %s", item)
			}
			out = append(out, f)
		}
		*r = out
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("required_evidence must be a list of field names or a map of field to its type")
	}
	out := RequiredEvidence{}
	for _, name := range sortedNames(m) {
		if name == "" {
			return fmt.Errorf("required_evidence has an empty field name")
		}
		f := EvidenceField{Name: name}
		var typ string
		if err := json.Unmarshal(m[name], &typ); err == nil {
			f.Type = typ
		} else {
			var spec struct{ Type, Description string }
			_ = json.Unmarshal(m[name], &spec)
			f.Type, f.Description = spec.Type, spec.Description
		}
		out = append(out, f)
	}
	*r = out
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
