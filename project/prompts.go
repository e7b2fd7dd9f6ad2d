package project

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptDef is a published prompt and what it was built from, so that a
// reload republishes only what changed.
type promptDef struct {
	prompt *mcp.Prompt
	sig    string
}

// loadPrompts builds one prompt per workflow that can be started.
func (c *catalog) loadPrompts(ctx context.Context) map[string]promptDef {
	out := map[string]promptDef{}
	if c.wf == nil {
		return out
	}
	list, err := c.wf.ListWorkflows(ctx, "")
	if err != nil {
		c.log.Warn("cannot list workflows for prompts", "err", err)
		return out
	}
	for _, w := range list.Workflows {
		if w.Status != workflow.WorkflowReady {
			continue
		}
		p := workflowPrompt(w)
		sig, _ := json.Marshal(p)
		out[p.Name] = promptDef{prompt: p, sig: string(sig)}
	}
	return out
}

// workflowPrompt describes a workflow as a prompt that starts it.
func workflowPrompt(w workflow.WorkflowInfo) *mcp.Prompt {
	var phases []string
	for _, ph := range w.Phases {
		phases = append(phases, fmt.Sprintf("%d %s", ph.PhaseNumber, ph.PhaseName))
	}
	desc := strings.TrimSpace(w.Description)
	if desc != "" {
		desc += " "
	}
	desc += fmt.Sprintf("Starts (or resumes) the %s workflow: %d phases (%s).", w.WorkflowType, w.TotalPhases, strings.Join(phases, ", "))
	return &mcp.Prompt{
		Name:        w.WorkflowType,
		Title:       "Start workflow " + w.WorkflowType,
		Description: desc,
		Arguments: []*mcp.PromptArgument{{
			Name:        "target_file",
			Title:       "Target",
			Description: "What the workflow works on: a path relative to the project root, or a feature name.",
			Required:    true,
		}},
	}
}

// workflowsChanged republishes the prompts after the workflow definitions
// were reloaded: new and changed workflows are added (replacing the old
// prompt), removed ones removed; each server tells its clients with
// notifications/prompts/list_changed.
func (c *catalog) workflowsChanged() {
	if c == nil || c.wf == nil {
		return
	}
	now := c.loadPrompts(context.Background())
	c.mu.Lock()
	var gone []string
	var changed []*mcp.Prompt
	for name := range c.prompts {
		if _, ok := now[name]; !ok {
			gone = append(gone, name)
		}
	}
	for name, p := range now {
		if old, ok := c.prompts[name]; !ok || old.sig != p.sig {
			changed = append(changed, p.prompt)
		}
	}
	c.prompts = now
	servers := append([]*mcp.Server(nil), c.servers...)
	c.mu.Unlock()
	for _, s := range servers {
		for _, p := range changed {
			s.AddPrompt(p, c.startWorkflow)
		}
		if len(gone) > 0 {
			s.RemovePrompts(gone...)
		}
	}
}

// startWorkflow answers prompts/get: it starts the workflow on the target
// (or resumes the active session for the pair, as start_workflow does) and
// returns a message that hands the session and its first phase to the
// model, with the tools to go on.
func (c *catalog) startWorkflow(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Name
	target := strings.TrimSpace(req.Params.Arguments["target_file"])
	if target == "" {
		return nil, fmt.Errorf("prompt %s needs the target_file argument: the path or feature the workflow works on", name)
	}
	res, err := c.wf.Start(ctx, name, target, nil)
	if err != nil {
		return nil, fmt.Errorf("start workflow %s on %s: %w", name, target, err)
	}
	state, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the started session: %w", err)
	}
	verb := "Started"
	if res.Resumed {
		verb = "Resumed"
	}
	text := fmt.Sprintf("%s workflow %s on %s: session %s, phase %d of %d.\n\n"+
		"Work through it with this project's workflow tools: get_current_phase and get_task (session_id %q) for the work, "+
		"then complete_phase with the evidence the phase's gate asks for to move on. Use search_standards before each step.\n\n"+
		"The session as start_workflow returns it:\n\n```json\n%s\n```\n",
		verb, name, res.TargetFile, res.SessionID, res.CurrentPhase, res.TotalPhases, res.SessionID, state)
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("%s %s on %s", verb, name, res.TargetFile),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}, nil
}
