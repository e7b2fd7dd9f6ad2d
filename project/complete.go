package project

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions is the most values one completion/complete answer
// carries, as the MCP specification bounds it.
const maxCompletions = 100

// HostedCompleter is the part of a [Hosted] that answers
// completion/complete for the prompts and resource templates of the
// servers it hosts; handled is false for a reference none of them serves.
type HostedCompleter interface {
	Complete(ctx context.Context, req *mcp.CompleteRequest) (res *mcp.CompleteResult, handled bool, err error)
}

// complete answers completion/complete: the target_file argument of a
// workflow's prompt from Berth's own catalog, anything else from the
// hosted server that serves the prompt or template. Its values are always
// an array, as the specification says (clients such as the TypeScript SDK
// refuse a null), also where nothing matches or a hosted server sent null.
func (e *Engine) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res, err := e.completeRef(ctx, req)
	if res != nil && res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res, err
}

func (e *Engine) completeRef(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref: a prompt (ref/prompt) or a resource template (ref/resource)"}
	}
	p := e.current()
	if ref.Type == "ref/prompt" && p.catalog.hasPrompt(ref.Name) {
		return p.catalog.completeWorkflow(ctx, ref.Name, req.Params.Argument)
	}
	if h, ok := e.hosted.get().(HostedCompleter); ok {
		if res, handled, err := h.Complete(ctx, req); handled {
			return res, err
		}
	}
	if ref.Type == "ref/prompt" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q: prompts/list names the prompts this project offers", ref.Name)}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown resource template %q: resources/templates/list names the templates this project offers", ref.URI)}
}

// hasPrompt reports whether name is one of the catalog's workflow prompts.
func (c *catalog) hasPrompt(name string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.prompts[name]
	return ok
}

// completeWorkflow completes a workflow prompt's target_file: the targets
// of that workflow's sessions first (active ones before completed, most
// recent first), then the project's files and folders under what was
// typed so far (folders end in /; dot-files only once a dot is typed).
func (c *catalog) completeWorkflow(ctx context.Context, workflowType string, arg mcp.CompleteParamsArgument) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{}
	if arg.Name != "target_file" {
		return res, nil
	}
	typed := arg.Value
	var values []string
	seen := map[string]bool{}
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	if list, err := c.wf.Sessions(ctx, workflow.FilterAll); err == nil {
		sessions := list.Sessions
		slices.SortStableFunc(sessions, func(a, b workflow.SessionSummary) int {
			return boolRank(a.Status != workflow.StatusActive) - boolRank(b.Status != workflow.StatusActive)
		})
		for _, s := range sessions {
			if s.WorkflowType == workflowType && strings.HasPrefix(s.TargetFile, typed) {
				add(s.TargetFile)
			}
		}
	}
	for _, p := range c.pathsUnder(typed) {
		add(p)
	}
	res.Completion.Total = len(values)
	if len(values) > maxCompletions {
		values, res.Completion.HasMore = values[:maxCompletions], true
	}
	res.Completion.Values = values
	return res, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pathsUnder lists the entries of the project folder that typed names
// (its part up to the last /) whose names begin with the rest of typed,
// as project-relative paths. Nothing outside the project is listed.
func (c *catalog) pathsUnder(typed string) []string {
	dir, prefix := path.Split(filepath.ToSlash(typed))
	clean := path.Clean("/" + dir)
	if strings.HasPrefix(dir, "/") || dir != "" && clean != "/"+strings.TrimSuffix(dir, "/") {
		return nil // /x, .., //, ./: not a plain project-relative path
	}
	real, err := filepath.EvalSymlinks(filepath.Join(c.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	root, err := filepath.EvalSymlinks(c.root)
	if err != nil {
		return nil
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil // a link out of the project
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil
	}
	var out []string
	for _, ent := range entries {
		name := ent.Name()
		if !strings.HasPrefix(name, prefix) || strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		if ent.IsDir() {
			name += "/"
		}
		out = append(out, dir+name)
	}
	return out
}
