package brokertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Everything checks what the real server-everything offers through a
// session of a project that hosts it under the name "everything".
type Everything struct {
	S *mcp.ClientSession
	// Progress receives the session's progress notifications (its
	// client's ProgressNotificationHandler sends them here).
	Progress chan *mcp.ProgressNotificationParams
}

// NewEverythingClient returns client options that feed e.Progress.
func NewEverythingClient() (*mcp.ClientOptions, chan *mcp.ProgressNotificationParams) {
	ch := make(chan *mcp.ProgressNotificationParams, 64)
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { ch <- req.Params },
	}, ch
}

// ProgressAndCancel checks that a long operation's progress reaches the
// caller under its own token, and that a cancelled call returns at once
// while the server carries on (the next call answers).
func (e Everything) ProgressAndCancel(tb testing.TB, ctx context.Context) {
	tb.Helper()
	res, err := e.S.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation",
		Arguments: map[string]any{"duration": 0.3, "steps": 3}, Meta: mcp.Meta{"progressToken": "caller-1"}})
	if err != nil || res.IsError {
		tb.Fatalf("long running operation: %v %+v", err, res)
	}
	for i := 1; i <= 3; i++ {
		p := e.next(tb, "progress of the first call")
		if p.ProgressToken != "caller-1" || p.Progress != float64(i) || p.Total != 3 {
			tb.Fatalf("progress %d = %+v", i, p)
		}
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := e.S.CallTool(callCtx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation",
			Arguments: map[string]any{"duration": 120, "steps": 1200}, Meta: mcp.Meta{"progressToken": "caller-2"}})
		errc <- err
	}()
	if p := e.next(tb, "progress of the long call"); p.ProgressToken != "caller-2" {
		tb.Fatalf("progress of the long call: %+v", p)
	}
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			tb.Fatal("the cancelled call succeeded")
		}
	case <-time.After(30 * time.Second):
		tb.Fatal("the cancelled call did not return")
	}
	res, err = e.S.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "after the cancel"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "after the cancel") {
		tb.Errorf("echo after the cancel: %v %+v", err, res)
	}
}

func (e Everything) next(tb testing.TB, what string) *mcp.ProgressNotificationParams {
	tb.Helper()
	select {
	case p := <-e.Progress:
		return p
	case <-time.After(WaitLimit):
		tb.Fatalf("never within %s: %s", WaitLimit, what)
		return nil
	}
}

// ResourcesAndPrompts checks that server-everything's resources (static
// and templated) and prompts are listed and readable.
func (e Everything) ResourcesAndPrompts(tb testing.TB, ctx context.Context) {
	tb.Helper()
	static := StaticDocument(tb, ctx, e.S)
	rr, err := e.S.ReadResource(ctx, &mcp.ReadResourceParams{URI: static})
	if err != nil || len(rr.Contents) == 0 || rr.Contents[0].Text == "" {
		tb.Fatalf("read %s: %v %+v", static, err, rr)
	}
	tl, err := e.S.ListResourceTemplates(ctx, nil)
	if err != nil || !slices.ContainsFunc(tl.ResourceTemplates, func(rt *mcp.ResourceTemplate) bool {
		return rt.URITemplate == "demo://resource/dynamic/text/{resourceId}"
	}) {
		tb.Fatalf("templates: %v %+v", err, tl)
	}
	rr, err = e.S.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/7"})
	if err != nil || len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, "7") {
		tb.Fatalf("read a templated resource: %v %+v", err, rr)
	}
	pl, err := e.S.ListPrompts(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, p := range pl.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "everything__simple-prompt") || !slices.Contains(names, "everything__args-prompt") {
		tb.Fatalf("prompts %v", names)
	}
	pr, err := e.S.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__args-prompt", Arguments: map[string]string{"city": "Lisbon"}})
	if err != nil || len(pr.Messages) == 0 {
		tb.Fatalf("args-prompt: %v %+v", err, pr)
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Lisbon") {
		tb.Errorf("args-prompt message %+v", pr.Messages[0].Content)
	}
}

// StaticDocument lists the session's resources and returns the URI of one
// of server-everything's static documents.
func StaticDocument(tb testing.TB, ctx context.Context, s *mcp.ClientSession) string {
	tb.Helper()
	rl, err := s.ListResources(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range rl.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			return r.URI
		}
	}
	tb.Fatalf("no static document among %d resources", len(rl.Resources))
	return ""
}
