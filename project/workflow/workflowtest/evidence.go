package workflowtest

import "fmt"

// Evidence builds evidence for a gate as the server describes it
// (phase.gate.evidence_fields): valid gives every required field a value
// of its type that passes its declared checks; invalid gives every
// required field a value of the wrong type, and leaves the first out.
func Evidence(gate map[string]any, valid bool) map[string]any {
	ev := map[string]any{}
	fields, _ := gate["evidence_fields"].([]any)
	first := true
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		if req, _ := fm["required"].(bool); !req {
			continue
		}
		if !valid {
			if first {
				first = false
				continue
			}
			ev[name] = wrongValue(fm["type"])
			continue
		}
		ev[name] = goodValue(fm)
	}
	return ev
}

func goodValue(f map[string]any) any {
	switch f["type"] {
	case "boolean":
		return true
	case "integer", "number":
		n := 3.0
		if lo, ok := f["min"].(float64); ok && lo > n {
			n = lo
		}
		if hi, ok := f["max"].(float64); ok && hi < n {
			n = hi
		}
		return n
	case "list":
		if inc, ok := f["must_include"].([]any); ok && len(inc) > 0 {
			return inc
		}
		return []any{"item"}
	case "object":
		obj := map[string]any{"note": "done"}
		if conf, ok := f["must_confirm"].([]any); ok {
			for _, c := range conf {
				obj[fmt.Sprint(c)] = true
			}
		}
		return obj
	case "string":
		return "done: every step of the phase is finished and checked"
	}
	return true
}

func wrongValue(typ any) any {
	switch typ {
	case "boolean":
		return "yes"
	case "integer", "number":
		return "three"
	case "string":
		return 5.0
	case "list":
		return "item"
	case "object":
		return []any{"x"}
	}
	return nil
}
