package project

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes collects the notifications a client receives.
type notes struct {
	resourcesChanged chan struct{}
	updated          chan string
	promptsChanged   chan struct{}
}

// connectWatching connects a go-sdk client that records resource and
// prompt notifications to a new server of e.
func connectWatching(t *testing.T, e *Engine) (*mcp.ClientSession, *notes) {
	t.Helper()
	n := &notes{resourcesChanged: make(chan struct{}, 100), updated: make(chan string, 100), promptsChanged: make(chan struct{}, 100)}
	opts := &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { n.resourcesChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			n.updated <- r.Params.URI
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { n.promptsChanged <- struct{}{} },
	}
	cs := connectWith(t, e, opts)
	return cs, n
}

// resourceNames lists the client's resources by name (path).
func resourceNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Resource {
	t.Helper()
	out := map[string]*mcp.Resource{}
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[r.Name] = r
	}
	return out
}

// receive waits up to 10 s for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10 s", what)
		panic("unreachable")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStandardsAreResources(t *testing.T) {
	root := t.TempDir()
	std := filepath.Join(root, ".praxis-os", "standards")
	writeFile(t, filepath.Join(std, "a.md"), "---\ntitle: Alpha rules\n---\n# A\n\nFirst version.\n")
	writeFile(t, filepath.Join(std, "b.md"), "# Bravo\n\nB text.\n")
	writeFile(t, filepath.Join(std, "notes.txt"), "not markdown")
	e := openEngine(t, root)
	cs, n := connectWatching(t, e)
	ctx := context.Background()

	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
		t.Fatalf("resources capability = %+v", caps.Resources)
	}
	var res map[string]*mcp.Resource
	brokertest.Eventually(t, "both standards listed", func() bool { res = resourceNames(t, cs); return len(res) == 2 })
	a, b := res[".praxis-os/standards/a.md"], res[".praxis-os/standards/b.md"]
	if a == nil || b == nil || a.Title != "Alpha rules" || b.Title != "Bravo" || a.MIMEType != "text/markdown" || !strings.HasPrefix(a.URI, "file:///") {
		t.Fatalf("resources: %+v %+v", a, b)
	}
	read := func(uri string) string {
		t.Helper()
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(r.Contents) != 1 || r.Contents[0].MIMEType != "text/markdown" {
			t.Fatalf("read %s: %+v", uri, r.Contents)
		}
		return r.Contents[0].Text
	}
	if got := read(a.URI); !strings.Contains(got, "First version.") {
		t.Fatalf("a.md reads %q", got)
	}

	// Subscribed: an edit is announced, and reads give the new text.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: a.URI}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(std, "a.md"), "---\ntitle: Alpha rules\n---\n# A\n\nSecond version.\n")
	if uri := receive(t, n.updated, "notifications/resources/updated"); uri != a.URI {
		t.Fatalf("updated %s, want %s", uri, a.URI)
	}
	if got := read(a.URI); !strings.Contains(got, "Second version.") {
		t.Fatalf("after the edit a.md reads %q", got)
	}

	// Files that come and go change the list.
	drain(n.resourcesChanged)
	writeFile(t, filepath.Join(std, "sub", "c.md"), "# Charlie\n\nNew.\n")
	if err := os.Remove(filepath.Join(std, "b.md")); err != nil {
		t.Fatal(err)
	}
	receive(t, n.resourcesChanged, "notifications/resources/list_changed")
	brokertest.Eventually(t, "c.md listed and b.md gone", func() bool {
		res = resourceNames(t, cs)
		return res[".praxis-os/standards/sub/c.md"] != nil && res[".praxis-os/standards/b.md"] == nil
	})

	// Only indexed files can be read. (This client speaks the protocol
	// version whose subscriptions/listen reports no error to Subscribe; the
	// TypeScript client's resources/subscribe checks the refusal.)
	for _, uri := range []string{b.URI, fileURI(filepath.Join(std, "notes.txt")), "file:///etc/passwd"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("read %s: %v, want a not-found error", uri, err)
		}
	}
}

// drain empties a notification channel.
func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestWorkflowsArePrompts(t *testing.T) {
	root := t.TempDir()
	wfDir := filepath.Join(root, ".praxis-os", "workflows")
	if err := os.CopyFS(wfDir, workflow.ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
	e := openEngine(t, root)
	cs, n := connectWatching(t, e)
	ctx := context.Background()

	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "bug_fix_v1" {
		t.Fatalf("prompts: %+v", list.Prompts)
	}
	p := list.Prompts[0]
	if len(p.Arguments) != 1 || p.Arguments[0].Name != "target_file" || !p.Arguments[0].Required || !strings.Contains(p.Description, "3 phases") {
		t.Fatalf("prompt: %+v", p)
	}

	get := func(args map[string]string) (string, error) {
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "bug_fix_v1", Arguments: args})
		if err != nil {
			return "", err
		}
		if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
			t.Fatalf("prompt messages: %+v", r.Messages)
		}
		return r.Messages[0].Content.(*mcp.TextContent).Text, nil
	}
	first, err := get(map[string]string{"target_file": "src/app.go"})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := e.current().workflow.Sessions(ctx, workflow.FilterAll)
	if err != nil || len(sessions.Sessions) != 1 {
		t.Fatalf("sessions after the prompt: %+v %v", sessions, err)
	}
	id := sessions.Sessions[0].SessionID
	if !strings.HasPrefix(first, "Started workflow bug_fix_v1 on src/app.go: session "+id) || !strings.Contains(first, "get_current_phase") {
		t.Fatalf("first message:\n%s", first)
	}
	again, err := get(map[string]string{"target_file": "src/app.go"})
	if err != nil || !strings.HasPrefix(again, "Resumed workflow bug_fix_v1 on src/app.go: session "+id) {
		t.Fatalf("second get: %v\n%s", err, again)
	}
	if _, err := get(nil); err == nil || !strings.Contains(err.Error(), "target_file") {
		t.Fatalf("no target: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope_v1", Arguments: map[string]string{"target_file": "x"}}); err == nil {
		t.Fatal("unknown prompt: no error")
	}

	// A new workflow on disk becomes a prompt, announced to the client.
	meta, err := os.ReadFile(filepath.Join(wfDir, "bug_fix_v1", "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(wfDir, "chore_v1"), os.DirFS(filepath.Join(wfDir, "bug_fix_v1"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wfDir, "chore_v1", "metadata.json"), strings.Replace(string(meta), "bug_fix_v1", "chore_v1", 1))
	receive(t, n.promptsChanged, "notifications/prompts/list_changed")
	brokertest.Eventually(t, "chore_v1 listed", func() bool {
		list, err := cs.ListPrompts(ctx, nil)
		return err == nil && slices.ContainsFunc(list.Prompts, func(p *mcp.Prompt) bool { return p.Name == "chore_v1" })
	})
}
