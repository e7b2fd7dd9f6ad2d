package systest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shirou/gopsutil/v4/process"
)

// memoryProject makes a project whose config declares the real npm
// server-memory as "memory", keeping its graph in graph.
func memoryProject(t *testing.T, name, graph string) (root, script string) {
	t.Helper()
	node, script := brokertest.NPMServer(t, "server-memory")
	root = brokertest.Project(t, name, nil)
	writeServers(t, root, fmt.Sprintf("  memory:\n    command: %q\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n", node, script, graph))
	return root, script
}

// writeServers writes the project's config.yaml with a servers map (the
// YAML of its entries, indented by two spaces).
func writeServers(t *testing.T, root, entries string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte("servers:\n"+entries), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serverStatus is the named server of the project at root, from GET /servers.
func serverStatus(t *testing.T, ctx context.Context, b *brokertest.Broker, root, name string) api.ServerStatus {
	t.Helper()
	list, err := b.Client.Servers(ctx, root)
	if err != nil {
		t.Fatalf("GET /servers?root=%s: %v", root, err)
	}
	for _, p := range list.Projects {
		for _, s := range p.Servers {
			if s.Name == name {
				return s
			}
		}
	}
	t.Fatalf("no server %q in %+v", name, list)
	return api.ServerStatus{}
}

// serverProcesses lists the live processes of the broker on home whose
// command line holds marker (the hosted server's script).
func serverProcesses(t *testing.T, home, marker string) []int {
	t.Helper()
	var pids []int
	for _, pid := range brokertest.Processes(t, func(_, h string) bool { return h == home }) {
		p, err := process.NewProcess(pid)
		if err != nil {
			continue
		}
		if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
			pids = append(pids, int(pid))
		}
	}
	return pids
}

// listChanged returns client options whose tools/list_changed handler
// signals the channel.
func listChanged() (*mcp.ClientOptions, chan struct{}) {
	ch := make(chan struct{}, 64)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}, ch
}

func connectWith(t *testing.T, ctx context.Context, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "berth-test", Version: "1"}, opts).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hasMemoryTools(t *testing.T, ctx context.Context, s *mcp.ClientSession) bool {
	t.Helper()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return hasTool(res.Tools, "memory__read_graph") && hasTool(res.Tools, "memory__create_entities")
}

// callErr calls a tool that must fail and returns what the caller is told.
func callErr(t *testing.T, ctx context.Context, s *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	switch {
	case err != nil:
		return err.Error()
	case res.IsError:
		return brokertest.ResultText(res)
	}
	t.Fatalf("%s succeeded: %s", tool, brokertest.ResultText(res))
	return ""
}

// callText calls a tool that must succeed and returns its text.
func callText(t *testing.T, ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	return brokertest.ResultText(res)
}

// waitSignal waits (bounded) for one signal on ch.
func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(brokertest.WaitLimit):
		t.Fatalf("never within %s: %s", brokertest.WaitLimit, what)
	}
}

func drain(ch chan struct{}) {
	for len(ch) > 0 {
		<-ch
	}
}

// TestHostedServerWaitsForApproval: a server declared in a project does not
// run until `berth servers approve`; until then its tools are absent and
// the call, get_server_info, `berth servers` and the broker log name the
// command. Editing the definition withdraws the tools until it is approved
// again.
func TestHostedServerWaitsForApproval(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root, script := memoryProject(t, "trusty", filepath.Join(t.TempDir(), "graph.jsonl"))
	approve := "berth servers approve " + root

	tr, _ := shimTransport(t, b.Home, root)
	opts, changed := listChanged()
	ide := connectWith(t, ctx, tr, opts)
	if hasMemoryTools(t, ctx, ide) {
		t.Fatal("the unapproved server's tools are listed")
	}
	if msg := callErr(t, ctx, ide, "memory__read_graph"); !strings.Contains(msg, approve) || !strings.Contains(msg, "needs approval") {
		t.Errorf("calling an unapproved server's tool says %q; want it to name %q", msg, approve)
	}
	if n := len(serverProcesses(t, b.Home, script)); n != 0 {
		t.Fatalf("%d server-memory processes before the approval", n)
	}
	info := callOK(t, ctx, ide, "get_server_info", nil)
	servers, _ := info["servers"].([]any)
	if len(servers) != 1 || dig(servers[0], "state") != "needs approval" || dig(servers[0], "fix") != approve {
		t.Errorf("get_server_info servers = %v; want memory waiting with fix %q", info["servers"], approve)
	}
	out, code := berthCmd(t, b.Home, "servers", "--project", root)
	mustContain(t, out, "memory", "needs approval", "never approved", "run `"+approve+"`")
	if code != 0 {
		t.Errorf("berth servers exited %d", code)
	}
	brokertest.Eventually(t, "the broker log names the server waiting and the command", func() bool {
		raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "waits for approval") && strings.Contains(line, "server=memory") && strings.Contains(line, root) {
				return true
			}
		}
		return false
	})

	// Approval over the CLI: the window hears tools/list_changed and gets the tools.
	drain(changed)
	out, code = berthCmd(t, b.Home, "servers", "approve", root)
	if code != 0 {
		t.Fatalf("berth servers approve: %d\n%s", code, out)
	}
	mustContain(t, out, "approved", "memory: ", script)
	waitSignal(t, changed, "tools/list_changed after the approval")
	brokertest.Eventually(t, "memory tools after the approval", func() bool { return hasMemoryTools(t, ctx, ide) })
	callText(t, ctx, ide, "memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "berth", "entityType": "project", "observations": []any{"approved"}}}})
	pid := serverStatus(t, ctx, b, root, "memory").PID
	if !brokertest.Alive(pid) {
		t.Fatalf("status pid %d does not run", pid)
	}

	// A changed definition is a new one: withdrawn, its process stopped.
	drain(changed)
	writeServers(t, root, fmt.Sprintf("  memory:\n    command: node\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n", script, filepath.Join(t.TempDir(), "other.jsonl")))
	waitSignal(t, changed, "tools/list_changed after the edit")
	brokertest.Eventually(t, "memory tools withdrawn after the edit", func() bool { return !hasMemoryTools(t, ctx, ide) })
	if msg := callErr(t, ctx, ide, "memory__read_graph"); !strings.Contains(msg, "changed since it was approved") || !strings.Contains(msg, approve) {
		t.Errorf("after the edit the call says %q", msg)
	}
	if !brokertest.WaitGone(pid, brokertest.WaitLimit) {
		t.Errorf("the old definition's process %d still runs", pid)
	}
	// Approved again over the API: back.
	resp, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root})
	if err != nil || len(resp.Approved) != 1 || resp.Approved[0].Name != "memory" {
		t.Fatalf("approve again: %v %+v", err, resp)
	}
	brokertest.Eventually(t, "memory tools after approving the edit", func() bool { return hasMemoryTools(t, ctx, ide) })
	if got := callText(t, ctx, ide, "memory__read_graph", nil); !strings.Contains(got, "entities") {
		t.Errorf("read_graph after approving the edit: %q", got)
	}

	// A config that does not load keeps what runs, and the log says why.
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte("servers:\n  memory: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the broker log says the config does not load", func() bool {
		raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
		return strings.Contains(string(raw), "project config edit not applied, the previous settings stay")
	})
	if !hasMemoryTools(t, ctx, ide) {
		t.Error("a config that does not load withdrew the running server's tools")
	}

	// Revoked, even while the config does not load: stopped, tools gone,
	// and the fix is to approve again.
	pid = serverStatus(t, ctx, b, root, "memory").PID
	drain(changed)
	out, code = berthCmd(t, b.Home, "servers", "revoke", root)
	if code != 0 {
		t.Fatalf("berth servers revoke: %d\n%s", code, out)
	}
	mustContain(t, out, "approval withdrawn", "every server", "memory", "needs approval")
	waitSignal(t, changed, "tools/list_changed after the revocation")
	if hasMemoryTools(t, ctx, ide) {
		t.Error("the revoked server's tools are still listed")
	}
	if msg := callErr(t, ctx, ide, "memory__read_graph"); !strings.Contains(msg, approve) {
		t.Errorf("after the revocation the call says %q; want it to name %q", msg, approve)
	}
	if !brokertest.WaitGone(pid, brokertest.WaitLimit) {
		t.Errorf("the revoked server's process %d still runs", pid)
	}
}

// TestApproveRefusesWhatItCannotApprove: approving a project without
// servers, or a server it does not declare, fails with its code, and
// approval is refused over TCP (the socket only).
func TestApproveRefusesWhatItCannotApprove(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	bare := brokertest.Project(t, "bare", nil)
	_, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: bare})
	if !errors.Is(err, api.CodeNoServers) {
		t.Errorf("approve a project without servers: %v, want %s", err, api.CodeNoServers)
	}
	root := brokertest.Project(t, "one", nil)
	writeServers(t, root, "  memory:\n    command: /bin/false\n")
	_, err = b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root, Servers: []string{"github"}})
	if !errors.Is(err, api.CodeUnknownServer) || !strings.Contains(err.Error(), "memory") {
		t.Errorf("approve an undeclared server: %v, want %s naming memory", err, api.CodeUnknownServer)
	}
	_, err = b.Client.ApproveServers(ctx, api.ApproveRequest{Root: filepath.Join(t.TempDir(), "nowhere")})
	if !errors.Is(err, api.CodeNotProject) {
		t.Errorf("approve a missing directory: %v, want %s", err, api.CodeNotProject)
	}
	if st := serverStatus(t, ctx, b, root, "memory"); st.State != api.ServerNeedsApproval {
		t.Errorf("after refused approvals memory is %q", st.State)
	}
	tcp := api.NewTCPClient(fmt.Sprintf("127.0.0.1:%d", ctl))
	if _, err := tcp.ApproveServers(ctx, api.ApproveRequest{Root: root}); !errors.Is(err, api.CodeNoEndpoint) {
		t.Errorf("approve over TCP: %v, want %s", err, api.CodeNoEndpoint)
	}
	if _, err := tcp.Servers(ctx, root); err != nil {
		t.Errorf("GET /servers over TCP: %v", err)
	}
	if _, err := tcp.RevokeServers(ctx, api.RevokeRequest{Root: root}); !errors.Is(err, api.CodeNoEndpoint) {
		t.Errorf("revoke over TCP: %v, want %s", err, api.CodeNoEndpoint)
	}
	_, err = b.Client.RevokeServers(ctx, api.RevokeRequest{Root: root, Servers: []string{"github"}})
	if !errors.Is(err, api.CodeUnknownServer) || !strings.Contains(err.Error(), "memory") {
		t.Errorf("revoke an undeclared server: %v, want %s naming memory", err, api.CodeUnknownServer)
	}
	out, code := berthCmd(t, b.Home, "servers", "approve", bare)
	if code != 1 || !strings.Contains(out, "declares no MCP servers") {
		t.Errorf("berth servers approve on a project without servers: %d %q", code, out)
	}
}

// TestHostedMemorySharedByWindowsAndSubAgent: two IDE windows (shims) and a
// sub-agent over streamable HTTP use one server-memory process: what one
// window creates the others read. Calls are counted per server and under
// the hosted tools' own names, and the server's stderr is in
// get_recent_logs.
func TestHostedMemorySharedByWindowsAndSubAgent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root, script := memoryProject(t, "graph", filepath.Join(t.TempDir(), "graph.jsonl"))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}

	tr1, _ := shimTransport(t, b.Home, root)
	win1 := connectMCP(t, ctx, tr1)
	callText(t, ctx, win1, "memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "berth", "entityType": "project", "observations": []any{"hosts servers once"}}}})
	tr2, _ := shimTransport(t, b.Home, root)
	win2 := connectMCP(t, ctx, tr2)
	sf, err := api.ReadStateFile(root)
	if err != nil || sf.URL == nil {
		t.Fatalf("state file: %v %+v", err, sf)
	}
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL})
	for name, s := range map[string]*mcp.ClientSession{"window 2": win2, "sub-agent": agent} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
		if err != nil || res.IsError || !strings.Contains(brokertest.ResultText(res), "hosts servers once") {
			t.Errorf("%s reads %v %q", name, err, brokertest.ResultText(res))
		}
	}

	st := serverStatus(t, ctx, b, root, "memory")
	pids := serverProcesses(t, b.Home, script)
	if len(pids) != 1 || pids[0] != st.PID || st.State != api.ServerRunning {
		t.Fatalf("server-memory processes %v, status %+v: want exactly one, the status's", pids, st)
	}
	if p, err := process.NewProcess(int32(st.PID)); err != nil {
		t.Fatal(err)
	} else if ppid, _ := p.Ppid(); int(ppid) != b.PID() {
		t.Errorf("server-memory's parent is %d, not the broker %d", ppid, b.PID())
	}
	if st.Tools < 5 || st.Calls != 3 || st.Errors != 0 || st.RSSBytes == 0 || st.Origin != api.OriginProject {
		t.Errorf("status %+v: want its tools, 3 calls, no error, an RSS", st)
	}
	out, _ := berthCmd(t, b.Home, "servers")
	mustContain(t, out, root, "memory", "running", fmt.Sprint(st.PID), "MiB")

	id := api.ProjectID(root)
	fams := scrape(t, ctx, b)
	for name, want := range map[string]float64{"berth_hosted_server_calls_total": 3, "berth_hosted_server_errors_total": 0, "berth_hosted_server_restarts_total": 0, "berth_hosted_server_up": 1} {
		if v, ok := metricValue(fams, name, map[string]string{"project": id, "server": "memory"}); !ok || v != want {
			t.Errorf("%s{server=memory} = %v (%v), want %v", name, v, ok, want)
		}
	}
	if v, ok := metricValue(fams, "berth_tool_calls_total", map[string]string{"project": id, "tool": "memory__read_graph", "outcome": "ok"}); !ok || v != 2 {
		t.Errorf("berth_tool_calls_total{tool=memory__read_graph} = %v (%v), want 2", v, ok)
	}
	if _, ok := metricValue(fams, "berth_tool_calls_total", map[string]string{"project": id, "tool": "unknown"}); ok {
		t.Error("hosted tool calls were counted as unknown")
	}

	recs, errText := recentLogs(t, ctx, agent, map[string]any{"limit": 500})
	if errText != "" {
		t.Fatal(errText)
	}
	if !slices.ContainsFunc(recs, func(r api.LogLine) bool {
		return r.Message == "hosted server stderr" && r.Attrs["server"] == "memory" && strings.Contains(r.Attrs["line"], "Knowledge Graph MCP Server running")
	}) {
		t.Errorf("get_recent_logs lacks server-memory's stderr line tagged server=memory: %+v", recs)
	}
	info := getServerInfo(t, ctx, win2)
	if !slices.Contains(info.Capabilities.Tools, "memory__read_graph") || !slices.Contains(info.Capabilities.Tools, "get_server_info") ||
		info.Capabilities.ToolsAvailable != len(info.Capabilities.Tools) {
		t.Errorf("tools %v (tools_available %d) lack the hosted tools or its own", info.Capabilities.Tools, info.Capabilities.ToolsAvailable)
	}
	// Berth's own tools alone stay under the default mcp.max_tools_warning
	// (20); with server-memory's they pass it, and the log says so.
	own := info.Capabilities.ToolsAvailable - st.Tools
	if own > 20 || own+st.Tools <= 20 {
		t.Fatalf("%d own and %d hosted tools: the check below needs them on both sides of 20", own, st.Tools)
	}
	if !slices.ContainsFunc(recs, func(r api.LogLine) bool {
		return strings.HasPrefix(r.Message, "more tools than mcp.max_tools_warning") && r.Attrs["hosted_tools"] == fmt.Sprint(st.Tools) &&
			r.Attrs["tools"] == fmt.Sprint(own+st.Tools) && strings.Contains(r.Message, "servers.<name>.tools")
	}) {
		t.Errorf("no max_tools_warning counting the hosted tools in the project's logs")
	}
}

// TestHostedServerRecoversFromKill9AndDiesWithTheBroker: after kill -9 of
// the hosted server the next call succeeds on a new process; after kill -9
// of the broker no server process (nor its group) is left.
func TestHostedServerRecoversFromKill9AndDiesWithTheBroker(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root, script := memoryProject(t, "crashy", filepath.Join(t.TempDir(), "graph.jsonl"))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	b.Attach(t, root)
	sf, err := api.ReadStateFile(root)
	if err != nil || sf.URL == nil {
		t.Fatalf("state file: %v %+v", err, sf)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL})
	callText(t, ctx, s, "memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "survivor", "entityType": "test", "observations": []any{"written before the crash"}}}})
	old := serverStatus(t, ctx, b, root, "memory").PID

	killed := time.Now()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var text string
	// A call in the instant of the crash may fail (it names the server);
	// the bound is generous for a loaded machine, the time is logged.
	if !brokertest.Poll(60*time.Second, func() bool {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			return false
		}
		text = brokertest.ResultText(res)
		return true
	}) {
		t.Fatalf("no successful call within 60s of kill -9 of the server; status %+v", serverStatus(t, ctx, b, root, "memory"))
	}
	t.Logf("kill -9 of server-memory to the next answer: %s", time.Since(killed).Round(time.Millisecond))
	if !strings.Contains(text, "written before the crash") {
		t.Errorf("after the restart the graph reads %q", text)
	}
	st := serverStatus(t, ctx, b, root, "memory")
	if st.PID == old || st.Restarts != 1 || !strings.Contains(st.LastError, "killed") {
		t.Errorf("status after kill -9: %+v", st)
	}
	if v, ok := metricValue(scrape(t, ctx, b), "berth_hosted_server_restarts_total", map[string]string{"server": "memory"}); !ok || v != 1 {
		t.Errorf("berth_hosted_server_restarts_total = %v (%v), want 1", v, ok)
	}

	pid := st.PID
	b.Kill(t)
	gone := func() bool {
		return brokertest.Reaped(pid) && errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) && len(serverProcesses(t, b.Home, script)) == 0
	}
	if !brokertest.Poll(brokertest.WaitLimit, gone) {
		t.Errorf("after kill -9 of the broker server-memory %d (or its process group) is still running: %v", pid, serverProcesses(t, b.Home, script))
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// everythingProject starts a broker and attaches a project named name that
// hosts the real npm server-everything as "everything", approved; it
// returns the broker, the project's root and its HTTP endpoint.
func everythingProject(t *testing.T, ctx context.Context, name string) (b *brokertest.Broker, root, url string) {
	t.Helper()
	node, script := brokertest.NPMServer(t, "server-everything")
	b = brokertest.StartBroker(t, brokertest.Options{})
	root = brokertest.Project(t, name, nil)
	writeServers(t, root, fmt.Sprintf("  everything:\n    command: %q\n    args: [%q, stdio]\n", node, script))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	return b, root, b.Attach(t, root).URL
}

// TestHostedEverythingThroughTheProjectPort: server-everything's progress
// notifications and cancellation pass through a real project port, and its
// resources and prompts are listed and readable there.
func TestHostedEverythingThroughTheProjectPort(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b, root, url := everythingProject(t, ctx, "everything")
	opts, progress := brokertest.NewEverythingClient()
	e := brokertest.Everything{S: connectWith(t, ctx, &mcp.StreamableClientTransport{Endpoint: url}, opts), Progress: progress}
	e.ProgressAndCancel(t, ctx)
	if st := serverStatus(t, ctx, b, root, "everything"); st.Restarts != 0 || st.State != api.ServerRunning {
		t.Errorf("the cancel disturbed the server: %+v", st)
	}
	e.ResourcesAndPrompts(t, ctx)
}

// TestFailedServerIsShownAndRestarted: a server that keeps crashing is
// marked failed with its last stderr line, Berth's own tools carry on, and
// `berth servers restart` starts it again once its cause is fixed.
func TestFailedServerIsShownAndRestarted(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-memory")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "flaky", nil)
	ready := filepath.Join(t.TempDir(), "ready")
	// It crashes until the file ready exists, then runs server-memory.
	sh := fmt.Sprintf(`test -f %q || { echo "flaky: not ready yet" >&2; exit 3; }; exec %q %q`, ready, node, script)
	writeServers(t, root, fmt.Sprintf("  flaky:\n    command: /bin/sh\n    args: [-c, %q]\n    env: {MEMORY_FILE_PATH: %q}\n    start: eager\n",
		sh, filepath.Join(t.TempDir(), "graph.jsonl")))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	url := b.Attach(t, root).URL
	var st api.ServerStatus
	if !brokertest.Poll(60*time.Second, func() bool { st = serverStatus(t, ctx, b, root, "flaky"); return st.State == api.ServerFailed }) {
		t.Fatalf("never failed: %+v", st)
	}
	restart := "berth servers restart " + root + " flaky"
	if !strings.Contains(st.LastError, "exit status 3") || !strings.Contains(st.LastError, "flaky: not ready yet") || st.Fix != restart {
		t.Errorf("failed status %+v: want the exit, the last stderr line and the fix %q", st, restart)
	}
	out, _ := berthCmd(t, b.Home, "servers", "--project", root)
	mustContain(t, out, "flaky", "failed", "not ready yet", "run `"+restart+"`")
	if st.Restarts != 4 {
		t.Errorf("a server failed after 5 crashes shows %d restarts, want 4", st.Restarts)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: url})
	if info := getServerInfo(t, ctx, s); !slices.Contains(info.Capabilities.Tools, "search_standards") {
		t.Errorf("Berth's own tools suffered from the failed server: %v", info.Capabilities.Tools)
	}
	if msg := callErr(t, ctx, s, "flaky__read_graph"); !strings.Contains(msg, `"flaky"`) || !strings.Contains(msg, "failed") {
		t.Errorf("calling the failed server's tool says %q", msg)
	}

	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := berthCmd(t, b.Home, "servers", "restart", root, "flaky")
	if code != 0 {
		t.Fatalf("berth servers restart: %d %s", code, out)
	}
	// The restart returned once the server serves: a call right after works.
	callText(t, ctx, s, "flaky__read_graph", map[string]any{})
	if st := serverStatus(t, ctx, b, root, "flaky"); st.State != api.ServerRunning || st.Fix != "" {
		t.Errorf("after the restart: %+v", st)
	}
	if out, code := berthCmd(t, b.Home, "servers", "restart", root, "nope"); code != 1 || !strings.Contains(out, `no hosted server "nope"`) {
		t.Errorf("restart of an unknown server: %d %q", code, out)
	}

	// A healthy server is restarted too: a new process, its tools served.
	before := serverStatus(t, ctx, b, root, "flaky")
	if out, code := berthCmd(t, b.Home, "servers", "restart", root, "flaky"); code != 0 {
		t.Fatalf("berth servers restart of a running server: %d %s", code, out)
	}
	after := serverStatus(t, ctx, b, root, "flaky")
	if after.State != api.ServerRunning || after.PID == 0 || after.PID == before.PID {
		t.Fatalf("the running server was not restarted when the restart returned: before %+v, after %+v", before, after)
	}
	if after.Restarts != before.Restarts+1 {
		t.Errorf("restarts %d after a restart asked of a server at %d", after.Restarts, before.Restarts)
	}
	if !brokertest.WaitGone(before.PID, 10*time.Second) {
		t.Errorf("the old process %d outlived the restart", before.PID)
	}
	callText(t, ctx, s, "flaky__read_graph", map[string]any{})
}

// TestMissingCommandFailsAtOnceWithItsFix: a server whose command no
// longer exists (approved, then uninstalled) is not started again and
// again: it fails at its first start, its status and `berth servers` name
// the whole fix, and a restart asked while the command is still missing
// fails once more, at once, and says so.
func TestMissingCommandFailsAtOnceWithItsFix(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "missing", nil)
	program := filepath.Join(t.TempDir(), "berth-no-such-server-anywhere")
	if err := os.WriteFile(program, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeServers(t, root, fmt.Sprintf("  ghost:\n    command: %q\n    start: eager\n", program))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(program); err != nil { // uninstalled after the approval
		t.Fatal(err)
	}
	url := b.Attach(t, root).URL
	var st api.ServerStatus
	if !brokertest.Poll(30*time.Second, func() bool { st = serverStatus(t, ctx, b, root, "ghost"); return st.State == api.ServerFailed }) {
		t.Fatalf("never failed: %+v", st)
	}
	if st.Restarts != 0 || !strings.Contains(st.LastError, "berth-no-such-server-anywhere") || !strings.Contains(st.LastError, "install it, or correct servers.ghost.command") {
		t.Errorf("failed status %+v: want no restart and the fix", st)
	}
	out, _ := berthCmd(t, b.Home, "servers", "--project", root)
	mustContain(t, out, "ghost failed: "+st.LastError, "run `berth servers restart "+root+" ghost`")

	out, code := berthCmd(t, b.Home, "servers", "restart", root, "ghost")
	if code != 1 || !strings.Contains(out, `hosted server "ghost" failed to start again`) || !strings.Contains(out, "install it, or correct servers.ghost.command") {
		t.Fatalf("berth servers restart of a missing command: exit %d, want 1 and the reason:\n%s", code, out)
	}
	again := serverStatus(t, ctx, b, root, "ghost")
	if again.State != api.ServerFailed {
		t.Fatalf("the restart of a missing command: %+v, want failed after one more try", again)
	}
	if again.Restarts != 1 {
		t.Errorf("restarts %d after one restart asked", again.Restarts)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: url})
	if info := getServerInfo(t, ctx, s); !slices.Contains(info.Capabilities.Tools, "search_standards") {
		t.Errorf("Berth's own tools suffered from the missing command: %v", info.Capabilities.Tools)
	}
}

// TestUserServersNeedNoApprovalAndAreShared: a share: user server in the
// broker's config serves every project without approval, as one process;
// its stderr reaches each project's get_recent_logs.
func TestUserServersNeedNoApprovalAndAreShared(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := memoryBroker(t, "    share: user\n")
	_, script := brokertest.NPMServer(t, "server-memory")
	var sessions []*mcp.ClientSession
	for _, name := range []string{"alpha", "beta"} {
		url := b.Attach(t, brokertest.Project(t, name, nil)).URL
		sessions = append(sessions, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: url}))
	}
	callText(t, ctx, sessions[0], "memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "shared", "entityType": "note", "observations": []any{"one graph for every project"}}}})
	if got := callText(t, ctx, sessions[1], "memory__read_graph", map[string]any{}); !strings.Contains(got, "one graph for every project") {
		t.Errorf("beta reads %q", got)
	}
	list, err := b.Client.Servers(ctx, "")
	if err != nil || len(list.Projects) != 2 {
		t.Fatalf("servers: %v %+v", err, list)
	}
	pids := serverProcesses(t, b.Home, script)
	for _, p := range list.Projects {
		s := p.Servers[0]
		if s.Origin != api.OriginUser || s.Share != "user" || s.State != api.ServerRunning || len(pids) != 1 || s.PID != pids[0] {
			t.Errorf("%s: %+v; processes %v: want one running user server", p.Name, s, pids)
		}
	}
	for i, s := range sessions {
		recs, errText := recentLogs(t, ctx, s, map[string]any{"limit": 500})
		if errText != "" || !slices.ContainsFunc(recs, func(r api.LogLine) bool {
			return r.Attrs["server"] == "memory" && strings.Contains(r.Attrs["line"], "Knowledge Graph MCP Server running")
		}) {
			t.Errorf("project %d's recent logs lack the shared server's stderr: %s %+v", i, errText, recs)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
	if n := strings.Count(string(raw), "Knowledge Graph MCP Server running"); n != 1 {
		t.Errorf("the broker log has the shared server's start line %d times, want once", n)
	}
}

// TestCompletionsForWorkflowAndHostedPrompts: over a real project port,
// completion/complete suggests a workflow prompt's target_file from the
// workflow's sessions and the project's files, refuses an unknown prompt,
// and passes a hosted prompt's completion (with its context) to the
// server-everything that serves it.
func TestCompletionsForWorkflowAndHostedPrompts(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-everything")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "complete", map[string]string{
		"src/main.go":    "package main\n",
		"src/util/io.go": "package util\n",
		"src/.hidden":    "x\n",
		"README.md":      "# complete\n",
	})
	writeWorkflows(t, root)
	writeServers(t, root, fmt.Sprintf("  everything:\n    command: %q\n    args: [%q, stdio]\n", node, script))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
	if caps := s.InitializeResult().Capabilities; caps.Completions == nil {
		t.Fatalf("completions are not advertised: %+v", caps)
	}
	complete := func(ref *mcp.CompleteReference, name, value string, context map[string]string) ([]string, error) {
		t.Helper()
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: name, Value: value}}
		if context != nil {
			p.Context = &mcp.CompleteContext{Arguments: context}
		}
		res, err := s.Complete(ctx, p)
		if err != nil {
			return nil, err
		}
		if res.Completion.Total != len(res.Completion.Values) || res.Completion.HasMore {
			t.Errorf("complete %q: total %d, hasMore %v for %d values", value, res.Completion.Total, res.Completion.HasMore, len(res.Completion.Values))
		}
		return res.Completion.Values, nil
	}
	workflow := &mcp.CompleteReference{Type: "ref/prompt", Name: "bug_fix_v1"}
	callOK(t, ctx, s, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src-login-redesign"})
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"sr", []string{"src-login-redesign", "src/"}}, // the session's target first
		{"src/", []string{"src/main.go", "src/util/"}},
		{"src/.", []string{"src/.hidden"}},
		{"src/util/i", []string{"src/util/io.go"}},
		{"../", []string{}},
		{"/etc/", []string{}},
		{"nothing-like-it", []string{}},
	} {
		got, err := complete(workflow, "target_file", c.value, nil)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("complete target_file %q = %q, %v; want %q", c.value, got, err, c.want)
		}
	}
	if got, err := complete(workflow, "other", "s", nil); err != nil || len(got) != 0 {
		t.Errorf("an argument the prompt does not have: %q, %v; want no values", got, err)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "no_such_prompt"}, "x", "", nil); err == nil || !strings.Contains(err.Error(), `unknown prompt "no_such_prompt"`) {
		t.Errorf("an unknown prompt: %v", err)
	}

	hosted := &mcp.CompleteReference{Type: "ref/prompt", Name: "everything__completable-prompt"}
	if got, err := complete(hosted, "department", "En", nil); err != nil || !slices.Equal(got, []string{"Engineering"}) {
		t.Errorf("hosted completion of department \"En\" = %q, %v", got, err)
	}
	if got, err := complete(hosted, "name", "", map[string]string{"department": "Engineering"}); err != nil || !slices.Equal(got, []string{"Alice", "Bob", "Charlie"}) {
		t.Errorf("hosted completion of name in Engineering = %q, %v", got, err)
	}
	// A hosted resource template's argument, as resources/templates/list names it.
	if _, err := s.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	template := &mcp.CompleteReference{Type: "ref/resource", URI: "demo://resource/dynamic/text/{resourceId}"}
	if got, err := complete(template, "resourceId", "7", nil); err != nil || !slices.Equal(got, []string{"7"}) {
		t.Errorf("hosted template completion of resourceId \"7\" = %q, %v", got, err)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "nowhere://{x}"}, "x", "", nil); err == nil || !strings.Contains(err.Error(), "unknown resource template") {
		t.Errorf("an unknown template: %v", err)
	}
}

// TestHostedServerLogsReachSessions: what a hosted server sends as
// notifications/message reaches the project's sessions that set a level
// (through the project port and through berth-shim), under the server's
// name, and not a session that set none.
func TestHostedServerLogsReachSessions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b, root, url := everythingProject(t, ctx, "logs")
	listen := func() (*mcp.ClientOptions, chan *mcp.LoggingMessageParams) {
		got := make(chan *mcp.LoggingMessageParams, 64)
		return &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			// The simulated messages have no logger of their own; others
			// (everything/everything-server's "Roots updated") race them.
			if req.Params.Logger == "everything" {
				select {
				case got <- req.Params:
				default:
				}
			}
		}}, got
	}
	httpOpts, httpGot := listen()
	agent := connectWith(t, ctx, &mcp.StreamableClientTransport{Endpoint: url}, httpOpts)
	shimOpts, shimGot := listen()
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectWith(t, ctx, tr, shimOpts)
	silentOpts, silentGot := listen()
	silent := connectWith(t, ctx, &mcp.StreamableClientTransport{Endpoint: url}, silentOpts)
	for _, s := range []*mcp.ClientSession{agent, ide} {
		if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := silent.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// server-everything logs one message at once, then one every 5 s, each at
	// a random level.
	callText(t, ctx, agent, "everything__toggle-simulated-logging", nil)
	defer callText(t, ctx, agent, "everything__toggle-simulated-logging", nil)
	// Its levels are random, and Berth asks for info and above; it also
	// logs other things (the roots it was sent, "Roots updated: ..."),
	// which are skipped.
	simulated := func(name string, got chan *mcp.LoggingMessageParams) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case msg := <-got:
				if !strings.Contains(strings.ToLower(fmt.Sprint(msg.Data)), string(msg.Level)+"-level message") {
					continue // another message of the server (its own logger follows the server's name)
				}
				if msg.Logger != "everything" {
					t.Fatalf("%s got %+v under the logger %q; want \"everything\"", name, msg, msg.Logger)
				}
				return
			case <-deadline:
				t.Fatalf("%s heard no simulated log message of server-everything within 30s", name)
			}
		}
	}
	simulated("the HTTP session", httpGot)
	simulated("the IDE through berth-shim", shimGot)
	// One more to the HTTP session: by then the silent one would have had two.
	simulated("the HTTP session, a second time", httpGot)
	select {
	case msg := <-silentGot:
		t.Errorf("a session that set no level got %+v", msg)
	default:
	}
}
