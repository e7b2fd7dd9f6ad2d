package hosted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/broker/rawresult"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// target is one hosted server as a project's handlers reach it.
type target struct {
	name    string // the tool prefix in the project
	up      *upstream
	timeout time.Duration

	calls, errors atomic.Uint64 // requests forwarded from this project, and those that failed
}

// forward runs one request of a session on the upstream: it waits for a
// running server (starting a lazy one, waiting out a restart), records the
// caller for progress and server requests, bounds the call with the
// server's call_timeout and turns failures into JSON-RPC errors that name
// the server. Errors the server itself answers pass through unchanged.
func forward[R any](parent context.Context, t *target, ss *mcp.ServerSession, method, name string, token any,
	do func(context.Context, *generation, *caller) (R, error)) (R, error) {
	var zero R
	t.calls.Add(1)
	ctx, cancel := context.WithTimeout(parent, t.timeout)
	defer cancel()
	g, err := t.up.session(ctx)
	if err != nil {
		return zero, t.failure(parent, ctx, nil, method, name, err)
	}
	cl := t.up.calls.add(parent, t.name, ss, token)
	defer t.up.calls.remove(cl)
	res, err := do(context.WithValue(ctx, callerKey{}, cl), g, cl)
	if err != nil {
		return zero, t.failure(parent, ctx, g, method, name, err)
	}
	t.up.calls.drain(cl, time.Second)
	return res, nil
}

// failure explains why a forwarded request failed.
func (t *target) failure(parent, ctx context.Context, g *generation, method, name string, err error) error {
	t.errors.Add(1)
	var rpcErr *jsonrpc.Error
	switch {
	case parent.Err() != nil:
		return parent.Err() // the caller gave up: no one reads the answer
	case g == nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		st := t.up.status()
		return internalError("hosted server %q was not running within %s (servers.%s.call_timeout), so %s %q was not sent (it is %s; last error: %s)",
			t.name, t.timeout, t.name, method, name, st.State, orNone(st.LastError))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return internalError("hosted server %q did not answer %s %q within %s, so the call was cancelled on the server (raise servers.%s.call_timeout if it needs longer)",
			t.name, method, name, t.timeout, t.name)
	case errors.As(err, &rpcErr):
		return rpcErr
	case g == nil:
		return internalError("hosted server %q cannot take %s %q: %v", t.name, method, name, err)
	}
	// A transport error (EOF, closed connection, broken pipe) comes a
	// moment before the exit is reaped.
	ended := true
	select {
	case <-g.ended:
	case <-time.After(time.Second):
		ended = false
	}
	if ended {
		return internalError("hosted server %q exited during %s %q (%s); Berth restarts it", t.name, method, name, t.up.endText(g))
	}
	return internalError("hosted server %q: %s %q: %v", t.name, method, name, err)
}

// endText says how a generation ended and the server's last stderr line.
func (u *upstream) endText(g *generation) string {
	var parts []string
	if g.p != nil {
		if g.p.wait(time.Second) {
			parts = append(parts, g.p.exitText())
		}
	} else {
		parts = append(parts, "the connection ended")
	}
	if last := u.stderr.last(); last != "" {
		parts = append(parts, fmt.Sprintf("last stderr: %q", last))
	}
	if len(parts) == 0 {
		return "no stderr"
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func internalError(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// forwardMeta copies the caller's _meta for the upstream: without the
// per-request protocol keys (Berth's client sets its own), with Berth's
// progress token in place of the caller's and the log level Berth asks of
// servers.
func forwardMeta(in mcp.Meta, cl *caller) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range in {
		if passedOn(k) {
			out[k] = v
		}
	}
	if cl.token != nil {
		out["progressToken"] = cl.ours
	}
	// A server on MCP 2026-07-28 logs during a request at the level the
	// request names (as logging/setLevel sets it for older ones).
	out[mcp.MetaKeyLogLevel] = upstreamLogLevel
	return out
}

// callTool forwards tools/call for the upstream tool orig.
func (t *target) callTool(ctx context.Context, req *mcp.CallToolRequest, orig string) (*mcp.CallToolResult, error) {
	return forward(ctx, t, req.Session, "tools/call", orig, req.Params.GetProgressToken(),
		func(ctx context.Context, g *generation, cl *caller) (*mcp.CallToolResult, error) {
			if g.raw != nil {
				params, err := toolCallParams(req.Params, orig, cl)
				if err != nil {
					return nil, err
				}
				raw, err := g.raw.call(ctx, "tools/call", params)
				if err != nil {
					return nil, err
				}
				res, same, err := toolResult(raw)
				if same {
					rawresult.Keep(ctx, res, raw)
				}
				return res, err
			}
			return g.cs.CallTool(ctx, callParams(req.Params, orig, cl))
		})
}

// callParams are the params of tools/call for the upstream tool orig.
func callParams(in *mcp.CallToolParamsRaw, orig string, cl *caller) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Meta: forwardMeta(in.Meta, cl), Name: orig, InputResponses: in.InputResponses, RequestState: in.RequestState}
	if len(in.Arguments) > 0 {
		p.Arguments = in.Arguments
	}
	return p
}

// logLevelMeta opens the _meta of a forwarded request that passes on
// nothing of the caller's _meta (see forwardMeta).
const logLevelMeta = `{"_meta":{"` + mcp.MetaKeyLogLevel + `":"` + string(upstreamLogLevel) + `"`

// toolCallParams is callParams encoded, as json.Marshal encodes it, one
// line. The usual call (a _meta with nothing to pass on but a progress
// token, arguments on one line, no retry of the sessionless protocol) is
// written out here: no map for its _meta, its arguments not checked and
// copied once more (they were decoded from the caller's request).
func toolCallParams(in *mcp.CallToolParamsRaw, orig string, cl *caller) (json.RawMessage, error) {
	args := in.Arguments
	if in.InputResponses != nil || in.RequestState != "" || passesMeta(in.Meta) || bytes.ContainsAny(args, "\r\n") || len(args) > 0 && !json.Valid(args) {
		return json.Marshal(callParams(in, orig, cl))
	}
	name, err := json.Marshal(orig)
	if err != nil {
		return nil, err
	}
	p := make([]byte, 0, len(logLevelMeta)+len(`,"progressToken":""},"name":,"arguments":}`)+len(cl.ours)+len(name)+len(args))
	p = append(p, logLevelMeta...)
	if cl.token != nil {
		p = append(append(append(p, `,"progressToken":"`...), cl.ours...), '"') // "berth-N" needs no escaping
	}
	p = append(append(p, `},"name":`...), name...)
	if len(args) > 0 {
		p = append(append(p, `,"arguments":`...), args...)
	}
	return append(p, '}'), nil
}

// passesMeta reports whether forwardMeta passes on a member of in.
func passesMeta(in mcp.Meta) bool {
	for k := range in {
		if passedOn(k) {
			return true
		}
	}
	return false
}

// passedOn reports whether forwardMeta passes on the caller's _meta key k.
func passedOn(k string) bool {
	return k != "progressToken" && !strings.HasPrefix(k, "io.modelcontextprotocol/")
}

// getPrompt forwards prompts/get for the upstream prompt orig.
func (t *target) getPrompt(ctx context.Context, req *mcp.GetPromptRequest, orig string) (*mcp.GetPromptResult, error) {
	return forward(ctx, t, req.Session, "prompts/get", orig, req.Params.GetProgressToken(),
		func(ctx context.Context, g *generation, cl *caller) (*mcp.GetPromptResult, error) {
			p := *req.Params
			p.Name, p.Meta = orig, forwardMeta(req.Params.Meta, cl)
			return g.cs.GetPrompt(ctx, &p)
		})
}

// readResource forwards resources/read; URIs are the server's own.
func (t *target) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return forward(ctx, t, req.Session, "resources/read", req.Params.URI, req.Params.GetProgressToken(),
		func(ctx context.Context, g *generation, cl *caller) (*mcp.ReadResourceResult, error) {
			p := *req.Params
			p.Meta = forwardMeta(req.Params.Meta, cl)
			return g.cs.ReadResource(ctx, &p)
		})
}
