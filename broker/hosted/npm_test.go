package hosted

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryDecl declares server-memory keeping its graph in file.
func memoryDecl(t testing.TB, share, file string) Decl {
	node, script := brokertest.NPMServer(t, "server-memory")
	d := Decl{Name: "memory", Origin: OriginUser, Server: validServer(node, []string{script}, map[string]string{"MEMORY_FILE_PATH": file})}
	d.Server.Share = share
	return d
}

func everythingDecl(t testing.TB) Decl {
	node, script := brokertest.NPMServer(t, "server-everything")
	return Decl{Name: "everything", Origin: OriginUser, Server: validServer(node, []string{script, "stdio"}, nil)}
}

// direct connects a plain go-sdk stdio client to the server, as an IDE
// window does without Berth.
func direct(t testing.TB, ctx context.Context, d Decl) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(d.Server.Command, d.Server.Args...)
	cmd.Env = os.Environ()
	for k, v := range d.Server.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMemoryToolsNamespaced: server-memory's tools are served as
// memory__<tool> with the schemas, annotations and descriptions it gives.
func TestMemoryToolsNamespaced(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	d := memoryDecl(t, "project", filepath.Join(t.TempDir(), "memory.jsonl"))
	hp := openProject(t, newPool(t, Options{}), "p1", d)
	s := connect(t, hp, sessionOpts{})
	served, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range served.Tools {
		byName[tool.Name] = tool
	}
	own, err := direct(t, ctx, d).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Tools) < 5 {
		t.Fatalf("server-memory lists %d tools", len(own.Tools))
	}
	for _, want := range own.Tools {
		got := byName["memory__"+want.Name]
		if got == nil {
			t.Errorf("memory__%s not served", want.Name)
			continue
		}
		w, g := *want, *got
		w.Name = got.Name
		if diff := cmp.Diff(jsonOf(t, w), jsonOf(t, g)); diff != "" {
			t.Errorf("memory__%s differs from the server's own (-want +got):\n%s", want.Name, diff)
		}
	}
	if st := statusOf(t, hp, "memory"); st.Tools != len(own.Tools) || st.RSSBytes == 0 {
		t.Errorf("status %+v: want %d tools and an RSS", st, len(own.Tools))
	}
	if !slices.ContainsFunc(hp.Logs("memory"), func(l Line) bool { return strings.Contains(l.Text, "Knowledge Graph MCP Server running") }) {
		t.Errorf("stderr ring lacks the server's start line: %+v", hp.Logs("memory"))
	}
}

func jsonOf(t testing.TB, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var entity = map[string]any{"entities": []any{map[string]any{"name": "berth", "entityType": "project", "observations": []any{"hosts servers once"}}}}

// TestMemorySharedByUser: two projects declaring the same share: user
// server use one process: what one creates the other reads. It stops when
// the last project closes.
func TestMemorySharedByUser(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	pool := newPool(t, Options{})
	d := memoryDecl(t, "user", filepath.Join(t.TempDir(), "memory.jsonl"))
	a := openProject(t, pool, "a", d)
	b := openProject(t, pool, "b", d)
	sa, sb := connect(t, a, sessionOpts{}), connect(t, b, sessionOpts{})
	sa.call(t, ctx, "memory__create_entities", entity)
	if graph := sb.call(t, ctx, "memory__read_graph", nil); !strings.Contains(graph, "hosts servers once") {
		t.Fatalf("project b reads %q", graph)
	}
	pids := children(t, "server-memory")
	pa, pb := statusOf(t, a, "memory").PID, statusOf(t, b, "memory").PID
	if len(pids) != 1 || pids[0] != pa || pa != pb {
		t.Fatalf("server-memory processes %v, statuses %d and %d: want exactly one", pids, pa, pb)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if gone(pa) {
		t.Fatal("closing one project stopped the shared server")
	}
	if graph := sb.call(t, ctx, "memory__read_graph", nil); !strings.Contains(graph, "berth") {
		t.Fatalf("after a closed: %q", graph)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(pa) {
		t.Fatal("the shared server outlived its last project")
	}
}

// TestMemoryPerProject: share: project runs one process per project.
func TestMemoryPerProject(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	pool := newPool(t, Options{})
	a := openProject(t, pool, "a", memoryDecl(t, "project", filepath.Join(t.TempDir(), "a.jsonl")))
	b := openProject(t, pool, "b", memoryDecl(t, "project", filepath.Join(t.TempDir(), "b.jsonl")))
	sa, sb := connect(t, a, sessionOpts{}), connect(t, b, sessionOpts{})
	sa.call(t, ctx, "memory__create_entities", entity)
	if graph := sb.call(t, ctx, "memory__read_graph", nil); strings.Contains(graph, "berth") {
		t.Fatalf("project b sees project a's graph: %q", graph)
	}
	if graph := sa.call(t, ctx, "memory__read_graph", nil); !strings.Contains(graph, "berth") {
		t.Fatalf("project a lost its entity: %q", graph)
	}
	pids := children(t, "server-memory")
	pa, pb := statusOf(t, a, "memory").PID, statusOf(t, b, "memory").PID
	slices.Sort(pids)
	want := []int{min(pa, pb), max(pa, pb)}
	if pa == pb || !slices.Equal(pids, want) {
		t.Fatalf("server-memory processes %v, want %v", pids, want)
	}
}

// TestMemoryKill9: after kill -9 of the server the next call succeeds on a
// new process, and sessions hear tools/list_changed.
func TestMemoryKill9(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	hp := openProject(t, newPool(t, Options{}), "p1", memoryDecl(t, "project", filepath.Join(t.TempDir(), "memory.jsonl")))
	changes := make(chan struct{}, 16)
	hp.OnChange(func() { changes <- struct{}{} })
	hp.ensure(ctx, "", time.Minute)
	s := connect(t, hp, sessionOpts{})
	s.call(t, ctx, "memory__create_entities", entity)
	old := statusOf(t, hp, "memory").PID
	for len(changes) > 0 {
		<-changes
	}
	killed := time.Now()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The supervisor sees the exit; the next call waits out the restart.
	if !brokertest.Poll(30*time.Second, func() bool { return statusOf(t, hp, "memory").PID != old }) {
		t.Fatal("the kill was never noticed")
	}
	if graph := s.call(t, ctx, "memory__read_graph", nil); !strings.Contains(graph, "hosts servers once") {
		t.Fatalf("after the restart: %q", graph)
	}
	t.Logf("kill -9 to the next answer: %s", time.Since(killed).Round(time.Millisecond))
	select {
	case <-s.toolChanges:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the restart")
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("OnChange not called after the restart")
	}
	st := statusOf(t, hp, "memory")
	if st.Restarts != 1 || st.State != StateRunning || st.PID == old || !gone(old) || !strings.Contains(st.LastError, "killed") {
		t.Errorf("status after kill -9: %+v", st)
	}
}

// TestEverything runs one server-everything for a project and checks, on
// sessions of their own, what its features need of the hop: resources and
// prompts, its own requests to the caller, then progress and cancellation
// (last: the cancelled operation carries on in the server).
func TestEverything(t *testing.T) {
	hp := openProject(t, newPool(t, Options{}), "p1", everythingDecl(t))

	// Resources (static and templated) and prompts are listed and readable.
	t.Run("ResourcesAndPrompts", func(t *testing.T) {
		ctx := testCtx(t, 90*time.Second)
		brokertest.Everything{S: connect(t, hp, sessionOpts{}).ClientSession}.ResourcesAndPrompts(t, ctx)
	})

	// The server (MCP 2025-11-25) asks for sampling and roots with requests
	// of its own: sampling reaches the session that made the call; roots are
	// the project's root.
	t.Run("AsksTheCaller", func(t *testing.T) {
		ctx := testCtx(t, 90*time.Second)
		s := connect(t, hp, sessionOpts{version: "2025-11-25", client: mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled by the caller"}}, nil
			}}})
		if got := s.call(t, ctx, "everything__trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 10}); !strings.Contains(got, "sampled by the caller") {
			t.Errorf("sampling result %q", got)
		}
		if got := s.call(t, ctx, "everything__get-roots-list", nil); !strings.Contains(got, "file://"+filepath.ToSlash(hp.spec.Root)) {
			t.Errorf("roots %q, want the project root %s", got, hp.spec.Root)
		}
	})

	// Progress reaches the caller under its own token; a cancelled call
	// returns at once and the server carries on.
	t.Run("ProgressAndCancel", func(t *testing.T) {
		ctx := testCtx(t, 90*time.Second)
		opts, progress := brokertest.NewEverythingClient()
		s := connect(t, hp, sessionOpts{client: *opts})
		brokertest.Everything{S: s.ClientSession, Progress: progress}.ProgressAndCancel(t, ctx)
	})
}

// TestSharedServerKeepsCallersApart: two projects on one share: user
// server-everything, both calling with the same progress token at once:
// each session gets only its own call's progress.
func TestSharedServerKeepsCallersApart(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	pool := newPool(t, Options{})
	d := everythingDecl(t)
	d.Server.Share = "user"
	var got [2]chan *mcp.ProgressNotificationParams
	var sessions [2]*session
	for i, id := range []string{"a", "b"} {
		got[i] = make(chan *mcp.ProgressNotificationParams, 64)
		ch := got[i]
		sessions[i] = connect(t, openProject(t, pool, id, d), sessionOpts{client: mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { ch <- req.Params },
		}})
	}
	steps := []int{3, 5}
	errc := make(chan error, 2)
	for i, s := range sessions {
		go func() {
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation",
				Arguments: map[string]any{"duration": 0.5, "steps": steps[i]}, Meta: mcp.Meta{"progressToken": 1}})
			errc <- err
		}()
	}
	for range sessions {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(children(t, "server-everything")); n != 1 {
		t.Fatalf("%d server-everything processes, want 1", n)
	}
	for i := range sessions {
		// Notifications may trail the result a little.
		brokertest.Poll(5*time.Second, func() bool { return len(got[i]) >= steps[i] })
		if n := len(got[i]); n != steps[i] {
			t.Errorf("session %d got %d progress notifications, want %d", i, n, steps[i])
		}
		for range len(got[i]) {
			if p := <-got[i]; p.Total != float64(steps[i]) || p.ProgressToken != float64(1) {
				t.Errorf("session %d got %+v", i, p)
			}
		}
	}
}
