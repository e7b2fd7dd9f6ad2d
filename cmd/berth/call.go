package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

func runCall(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("call", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageError{"needs a tool name and, optionally, its JSON arguments"}
	}
	var toolArgs map[string]any
	if fs.NArg() == 2 {
		if err := json.Unmarshal([]byte(fs.Arg(1)), &toolArgs); err != nil {
			return usageError{fmt.Sprintf("arguments must be a JSON object, e.g. '{\"query\": \"x\"}': %v", err)}
		}
	}
	res, err := callTool(ctx, *dir, fs.Arg(0), toolArgs)
	if err != nil {
		return err
	}
	if err := printResult(os.Stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return errors.New("the tool reported an error (above)")
	}
	return nil
}

// withSession attaches dir (starting the broker if needed), opens an MCP
// session on the project through the broker's socket, runs f with it and
// detaches. A wait over a second shows a progress line on a terminal;
// f's MCP progress notifications feed it.
func withSession(ctx context.Context, dir string, f func(*mcp.ClientSession, *progress) error) error {
	return withSessions(ctx, dir, []string{""}, func(sess []*mcp.ClientSession, prog *progress) error { return f(sess[0], prog) })
}

// withSessions is withSession with one session per tools listing of modes
// (api.ToolsParam: all, finder or auto; "" the project's own). dir is
// served as the shim serves it: the project it is in, else dir itself as
// a folder (never the home directory, the folders above it or /).
func withSessions(ctx context.Context, dir string, modes []string, f func([]*mcp.ClientSession, *progress) error) error {
	root, folder, err := api.RootOrFolder(dir)
	if err != nil {
		return err
	}
	prog := startProgress("connecting to the broker")
	defer prog.end()
	c, err := connect(ctx, true)
	if err != nil {
		return err
	}
	prog.set("opening the project")
	att, err := c.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid(), Version: api.Version, Folder: folder})
	if err != nil {
		return err
	}
	defer c.Detach(context.WithoutCancel(ctx), att.ID, att.Lease)
	client := mcp.NewClient(&mcp.Implementation{Name: "berth-cli", Version: api.Version}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			prog.news(req.Params.Message)
		},
	})
	holder := &http.Client{Transport: leaseTransport{lease: att.Lease, next: c.HTTP.Transport}}
	var sessions []*mcp.ClientSession
	for _, mode := range modes {
		endpoint := c.MCPURL(att.ID)
		if mode != "" {
			endpoint += "?" + url.Values{api.ToolsParam: {mode}}.Encode()
		}
		sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: holder, DisableStandaloneSSE: true}, nil)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", att.ID, err)
		}
		defer sess.Close()
		sessions = append(sessions, sess)
	}
	return f(sessions, prog)
}

// callTool calls one tool of the project at dir and returns its result.
// A tool the project does not offer is an error naming the closest one.
func callTool(ctx context.Context, dir, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := withSession(ctx, dir, func(sess *mcp.ClientSession, prog *progress) error {
		prog.set("waiting for " + tool)
		params := &mcp.CallToolParams{Name: tool, Arguments: args}
		params.SetProgressToken("berth-cli")
		var err error
		if res, err = sess.CallTool(ctx, params); err != nil {
			return unknownToolHint(ctx, sess, tool, dir, err)
		}
		return nil
	})
	return res, err
}

// leaseTransport sends the attach's lease with every request: the
// control API's MCP route serves only the holder of a live attach.
type leaseTransport struct {
	lease string
	next  http.RoundTripper
}

func (t leaseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(api.LeaseHeader, t.lease)
	return t.next.RoundTrip(r)
}

// unknownToolHint adds the fix to err when the project has no tool of
// that name (a protocol error; the list of tools decides, not the text).
func unknownToolHint(ctx context.Context, sess *mcp.ClientSession, tool, dir string, err error) error {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		return err
	}
	var names []string
	for t, lerr := range sess.Tools(ctx, nil) {
		if lerr != nil || t.Name == tool {
			return err
		}
		names = append(names, t.Name)
	}
	hint := ""
	if m := config.Closest(tool, names); m != "" {
		hint = fmt.Sprintf("did you mean %s? ", m)
	}
	return fmt.Errorf("the project has no tool %q (%slist them with `berth tools --project %s`)", tool, hint, dir)
}

// printResult prints structured content as indented JSON, else the text.
func printResult(w io.Writer, res *mcp.CallToolResult) error {
	if res.StructuredContent != nil && !res.IsError {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res.StructuredContent)
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintln(w, t.Text)
		}
	}
	return nil
}
