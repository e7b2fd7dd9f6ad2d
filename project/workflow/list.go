package workflow

import (
	"context"
	"slices"
	"strings"
)

// WorkflowList is the result of list_workflows.
type WorkflowList struct {
	Workflows []WorkflowInfo `json:"workflows"`
	Count     int            `json:"count"`
	Folder    string         `json:"folder" jsonschema:"the workflows folder, relative to the project root"`
}

// ListWorkflows lists the defined workflows, broken and dynamic ones
// included, optionally only those of a category (metadata's category key).
func (e *Engine) ListWorkflows(ctx context.Context, category string) (WorkflowList, error) {
	if err := e.ready(ctx); err != nil {
		return WorkflowList{}, err
	}
	e.mu.RLock()
	out := WorkflowList{Workflows: []WorkflowInfo{}, Folder: e.relWorkflowsDir()}
	for _, w := range e.defs {
		if category != "" && !strings.EqualFold(w.Meta.Category, category) {
			continue
		}
		out.Workflows = append(out.Workflows, workflowInfo(w))
	}
	e.mu.RUnlock()
	slices.SortFunc(out.Workflows, func(a, b WorkflowInfo) int { return strings.Compare(a.WorkflowType, b.WorkflowType) })
	out.Count = len(out.Workflows)
	return out, nil
}
