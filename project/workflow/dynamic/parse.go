package dynamic

import (
	"errors"
	"fmt"
)

// ErrNoPhases is returned when a source parses but holds no phase.
var ErrNoPhases = errors.New("no phases found")

// Parse reads data (the source file's bytes) with the named parser. The
// result has at least one phase; slices are never nil.
func Parse(parser string, data []byte) ([]Phase, error) {
	if len(data) > MaxSourceBytes {
		return nil, fmt.Errorf("the source is %d bytes; at most %d are read: split the spec", len(data), MaxSourceBytes)
	}
	var (
		phases []Phase
		err    error
	)
	switch parser {
	case ParserSpecTasks:
		phases, err = parseTasksMD(data)
	case ParserWorkflowDefinition:
		phases, err = parseDefinition(data)
	default:
		return nil, fmt.Errorf("unknown parser %q (use %s or %s)", parser, ParserSpecTasks, ParserWorkflowDefinition)
	}
	if err != nil {
		return nil, err
	}
	if len(phases) == 0 {
		return nil, ErrNoPhases
	}
	if len(phases) > maxPhases {
		return nil, fmt.Errorf("%d phases; at most %d are allowed", len(phases), maxPhases)
	}
	for i := range phases {
		p := &phases[i]
		if len(p.Tasks) > maxTasksPerPhase {
			return nil, fmt.Errorf("phase %d has %d tasks; at most %d are allowed", p.Number, len(p.Tasks), maxTasksPerPhase)
		}
		p.Tasks = nonNil(p.Tasks)
		p.ValidationGate = nonNil(p.ValidationGate)
		for j := range p.Tasks {
			p.Tasks[j].Dependencies = nonNil(p.Tasks[j].Dependencies)
			p.Tasks[j].AcceptanceCriteria = nonNil(p.Tasks[j].AcceptanceCriteria)
		}
	}
	return phases, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
