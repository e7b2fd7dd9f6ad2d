package finder

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type callArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// call answers call_tool: it checks the arguments against the tool's
// input schema (refused with the schema's own message) and runs the call
// as the session would call the tool directly, through next: the hosted
// servers' middleware and the server's own tools/call, with the caller's
// _meta (its progress token), context (cancellation) and session. The
// answer is the tool's, errors included.
func (f *Finder) call(ctx context.Context, next mcp.MethodHandler, req mcp.Request, params *mcp.CallToolParamsRaw) (mcp.Result, error) {
	var args callArgs
	if err := decodeArgs(params.Arguments, &args); err != nil {
		return toolError("call_tool: %v", err), nil
	}
	if args.Name == "" {
		return toolError("call_tool: name is empty: give the name find_tools answered"), nil
	}
	if args.Name == FindTools || args.Name == CallTool {
		return toolError("call_tool: call %s directly", args.Name), nil
	}
	v, err := f.current(ctx)
	if err != nil {
		return toolError("call_tool: %v", err), nil
	}
	if t := v.cat.Lookup(args.Name); t != nil {
		if msg := validate(t, args.Arguments); msg != "" {
			return toolError("call_tool: the arguments of %s do not match its input schema: %s", args.Name, msg), nil
		}
	} else if server, _, ok := strings.Cut(args.Name, Sep); !ok || !v.hosted[server] {
		return toolError("call_tool: this project offers no tool %q: find one with find_tools", args.Name), nil
	}
	// A tool of a hosted server whose tools are not known yet goes on
	// unchecked: the hosted servers' middleware starts its server (or
	// says how to approve it) and the server checks its arguments.
	ss, _ := req.GetSession().(*mcp.ServerSession)
	direct := &mcp.CallToolRequest{Session: ss, Extra: req.GetExtra(),
		Params: &mcp.CallToolParamsRaw{Meta: params.Meta, Name: args.Name, Arguments: args.Arguments,
			InputResponses: params.InputResponses, RequestState: params.RequestState}}
	res, err := next(ctx, "tools/call", direct)
	if err == nil && ss != nil && f.opts.Config().Finder.Promote {
		f.promote(ctx, ss, args.Name)
	}
	return res, err
}

// validate checks args against t's input schema; "" when they match, else
// the schema's message.
func validate(t *Tool, args json.RawMessage) string {
	resolved, err := t.Resolved()
	if err != nil {
		return "" // a schema Berth cannot read: the tool checks its arguments itself
	}
	var instance any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &instance); err != nil {
			return err.Error()
		}
	}
	if err := resolved.Validate(instance); err != nil {
		return err.Error()
	}
	return ""
}
