package dynamic

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

type rawDefinition struct {
	Phases []struct {
		Number            int    `yaml:"number"`
		Name              string `yaml:"name"`
		Purpose           string `yaml:"purpose"`
		EstimatedDuration string `yaml:"estimated_duration"`
		Tasks             []struct {
			Number             *int     `yaml:"number"`
			Name               string   `yaml:"name"`
			Purpose            string   `yaml:"purpose"`
			EstimatedTime      string   `yaml:"estimated_time"`
			Dependencies       []string `yaml:"dependencies"`
			ValidationCriteria []string `yaml:"validation_criteria"`
		} `yaml:"tasks"`
		ValidationGate struct {
			EvidenceRequired yaml.Node `yaml:"evidence_required"`
		} `yaml:"validation_gate"`
	} `yaml:"phases"`
}

// parseDefinition reads a workflow definition YAML, as praxis-os's
// workflow_definition_parser does: each phase with its tasks (task ids are
// "<phase>.<task>") and its validation gate's evidence_required fields.
func parseDefinition(data []byte) ([]Phase, error) {
	var raw rawDefinition
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var out []Phase
	for _, rp := range raw.Phases {
		p := Phase{Number: rp.Number, Name: rp.Name, Description: rp.Purpose, EstimatedDuration: rp.EstimatedDuration}
		if p.Name == "" {
			p.Name = fmt.Sprintf("Phase %d", p.Number)
		}
		if p.EstimatedDuration == "" {
			p.EstimatedDuration = "Variable"
		}
		for _, rt := range rp.Tasks {
			n := 1
			if rt.Number != nil {
				n = *rt.Number
			}
			t := Task{
				ID: fmt.Sprintf("%d.%d", p.Number, n), Name: rt.Name, Description: rt.Purpose,
				EstimatedTime: rt.EstimatedTime, Dependencies: rt.Dependencies, AcceptanceCriteria: rt.ValidationCriteria,
			}
			if t.Name == "" {
				t.Name = fmt.Sprintf("task-%d", n)
			}
			if t.EstimatedTime == "" {
				t.EstimatedTime = "Variable"
			}
			p.Tasks = append(p.Tasks, t)
		}
		p.ValidationGate = evidenceCriteria(&rp.ValidationGate.EvidenceRequired)
		out = append(out, p)
	}
	return out, nil
}

// evidenceCriteria turns evidence_required {field: {type, validator,
// description}} into "field (type, validator): description" lines.
func evidenceCriteria(n *yaml.Node) []string {
	var out []string
	if n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind != yaml.MappingNode {
			out = append(out, v.Value)
			continue
		}
		var f struct{ Type, Validator, Description string }
		if err := v.Decode(&f); err != nil {
			out = append(out, name)
			continue
		}
		if f.Type == "" {
			f.Type = "unknown"
		}
		if f.Description == "" {
			f.Description = name
		}
		out = append(out, fmt.Sprintf("%s (%s, %s): %s", name, f.Type, f.Validator, f.Description))
	}
	return out
}
