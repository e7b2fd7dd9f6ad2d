package finder

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/finder/findertest"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project/config"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func memoryDecl(t testing.TB, dir string) hosted.Decl {
	node, memory := brokertest.NPMServer(t, "server-memory")
	return hosted.Decl{Name: "memory", Origin: hosted.OriginUser, Server: validServer(node, []string{memory},
		map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")})}
}

func workspaceDecl(t testing.TB) hosted.Decl {
	ws, env := findertest.Command(t)
	return hosted.Decl{Name: "workspace", Origin: hosted.OriginUser, Server: validServer(ws, nil, env)}
}

func names(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// callFind calls find_tools and decodes its answer.
func callFind(t testing.TB, ctx context.Context, cs *mcp.ClientSession, query string, n int) FindResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: FindTools, Arguments: map[string]any{"query": query, "n": n}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools %q: %v %s", query, err, brokertest.ResultText(res))
	}
	var fr FindResult
	if err := json.Unmarshal([]byte(brokertest.ResultText(res)), &fr); err != nil {
		t.Fatalf("find_tools answered %q: %v", brokertest.ResultText(res), err)
	}
	return fr
}

func foundNames(fr FindResult) []string {
	var out []string
	for _, t := range fr.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestFinderModeListsCoreToolsAndFindsTheRest: with mcp.tools_listing:
// finder a session lists find_tools, call_tool and Berth's core tools;
// find_tools finds a hosted tool with its full input schema, and
// call_tool calls it; a session of another project mode lists every tool.
func TestFinderModeListsCoreToolsAndFindsTheRest(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f := openFixtureWith(t, []hosted.Decl{eager(memoryDecl(t, t.TempDir())), eager(workspaceDecl(t))}, fixtureOpts{config: "mcp:\n  tools_listing: finder\n"})
	f.waitRunning(t, ctx)
	cs := f.connect(t, "cursor", nil)
	got := names(listTools(t, ctx, cs))
	want := []string{"find_tools", "call_tool", "current_date", "get_server_info", "search_standards", "start_workflow"}
	slices.Sort(got[2:])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("finder listing (-want +got):\n%s", diff)
	}

	fr := callFind(t, ctx, cs, "remember a new person called Alice", 3)
	if len(fr.Tools) != 3 || fr.Total < 100 {
		t.Fatalf("find_tools = %+v", fr)
	}
	var hit *FoundTool
	for i := range fr.Tools {
		if fr.Tools[i].Name == "memory__create_entities" {
			hit = &fr.Tools[i]
		}
	}
	if hit == nil {
		t.Fatalf("memory__create_entities not in %v", foundNames(fr))
	}
	own := f.finder.view.Load().cat.Lookup("memory__create_entities")
	if hit.Server != "memory" || string(hit.InputSchema) != string(own.Schema) || !strings.Contains(string(hit.InputSchema), `"entities"`) {
		t.Errorf("hit = %+v, want its server and full input schema %s", hit, own.Schema)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{
		"name": "memory__create_entities",
		"arguments": map[string]any{"entities": []any{map[string]any{
			"name": "Alice", "entityType": "person", "observations": []any{"likes tea"}}}},
	}})
	if err != nil || res.IsError || !strings.Contains(brokertest.ResultText(res), "Alice") {
		t.Fatalf("call_tool memory__create_entities: %v %s", err, brokertest.ResultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph"})
	if err != nil || !strings.Contains(brokertest.ResultText(res), "likes tea") {
		t.Errorf("the entity call_tool created is not in the graph: %v %s", err, brokertest.ResultText(res))
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{
		"name": "workspace__merge_pull_request", "arguments": map[string]any{"repo": "acme/api", "number": 42, "merge_method": "squash"}}})
	if err != nil || res.IsError || brokertest.ResultText(res) != `workspace merge_pull_request {"merge_method":"squash","number":42,"repo":"acme/api"}` {
		t.Errorf("call_tool workspace__merge_pull_request: %v %s", err, brokertest.ResultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": "get_server_info"}})
	if err != nil || res.IsError || !strings.Contains(brokertest.ResultText(res), f.root) {
		t.Errorf("call_tool get_server_info (Berth's own): %v %s", err, brokertest.ResultText(res))
	}
}

// TestCallToolRefusesArgumentsWithTheSchemasMessage: arguments that do not
// match the tool's input schema are refused as a tool error with the
// schema validator's message, and the tool is not called; an unknown tool
// and unknown call_tool members are refused by name.
func TestCallToolRefusesArgumentsWithTheSchemasMessage(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f := openFixture(t, []hosted.Decl{eager(workspaceDecl(t))})
	f.waitRunning(t, ctx)
	cs := f.connect(t, "cursor", nil)
	tool := f.finder.mustView(t).cat.Lookup("workspace__merge_pull_request")
	resolved, err := tool.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]any{"repo": "acme/api", "number": "forty-two"}
	wantErr := resolved.Validate(bad)
	if wantErr == nil {
		t.Fatal("the schema takes the bad arguments")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{
		"name": "workspace__merge_pull_request", "arguments": bad}})
	if err != nil || !res.IsError || !strings.Contains(brokertest.ResultText(res), wantErr.Error()) || strings.Contains(brokertest.ResultText(res), "workspace merge_pull_request") {
		t.Errorf("call_tool with bad arguments: %v %q, want a tool error with %q", err, brokertest.ResultText(res), wantErr)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{
		"name": "workspace__merge_pull_request", "arguments": map[string]any{"number": 1}}})
	if err != nil || !res.IsError || !strings.Contains(brokertest.ResultText(res), "repo") {
		t.Errorf("call_tool without a required argument: %v %q", err, brokertest.ResultText(res))
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "nosuch_tool"}, `no tool "nosuch_tool": find one with find_tools`},
		{map[string]any{"name": "get_server_info", "args": map[string]any{}}, `unknown field "args"`},
		{map[string]any{"name": ""}, "name is empty"},
		{map[string]any{"name": FindTools}, "call find_tools directly"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: tc.args})
		if err != nil || !res.IsError || !strings.Contains(brokertest.ResultText(res), tc.want) {
			t.Errorf("call_tool %v: %v %q, want a tool error with %q", tc.args, err, brokertest.ResultText(res), tc.want)
		}
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": " "}, "query is empty"},
		{map[string]any{"query": "merge", "n": 99}, "n must be between 1 and 20"},
		{map[string]any{"query": "merge", "limit": 3}, `unknown field "limit"`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: FindTools, Arguments: tc.args})
		if err != nil || !res.IsError || !strings.Contains(brokertest.ResultText(res), tc.want) {
			t.Errorf("find_tools %v: %v %q, want a tool error with %q", tc.args, err, brokertest.ResultText(res), tc.want)
		}
	}
}

// mustView is the finder's view, built now.
func (f *Finder) mustView(t testing.TB) *view {
	t.Helper()
	v, err := f.current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPromotedToolJoinsTheSessionsListing: with finder.promote a tool a
// session called through call_tool is added to that session's listing and
// the session hears notifications/tools/list_changed; another session's
// listing stays as it was.
func TestPromotedToolJoinsTheSessionsListing(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f := openFixtureWith(t, []hosted.Decl{workspaceDecl(t)}, fixtureOpts{config: "mcp:\n  tools_listing: finder\nfinder:\n  promote: true\n"})
	changed := make(chan struct{}, 8)
	cs := f.connect(t, "cursor", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	other := f.connect(t, "zed", nil)
	before := names(listTools(t, ctx, cs))
	if slices.Contains(before, "workspace__list_alerts") {
		t.Fatalf("finder listing holds a hosted tool: %v", before)
	}
	drain(changed)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": "workspace__list_alerts", "arguments": map[string]any{"severity": "critical"}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool: %v %s", err, brokertest.ResultText(res))
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after the promotion")
	}
	after := names(listTools(t, ctx, cs))
	if !slices.Contains(after, "workspace__list_alerts") || len(after) != len(before)+1 {
		t.Errorf("listing after the promotion = %v, want %v and workspace__list_alerts", after, before)
	}
	if got := names(listTools(t, ctx, other)); slices.Contains(got, "workspace__list_alerts") {
		t.Errorf("another session's listing got the promoted tool: %v", got)
	}
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestCallToolOfAServerAwaitingApproval: call_tool naming a tool of a
// project-declared server that is not approved answers the command that
// approves it, and find_tools lists the server with that command.
func TestCallToolOfAServerAwaitingApproval(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	d := workspaceDecl(t)
	d.Origin = hosted.OriginProject
	f := openFixture(t, []hosted.Decl{d})
	cs := f.connect(t, "cursor", nil)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": "workspace__list_alerts"}})
	if err == nil || !strings.Contains(err.Error(), "berth servers approve") || !strings.Contains(err.Error(), f.root) {
		t.Errorf("call_tool of an unapproved server's tool: %v, want the approve command", err)
	}
	fr := callFind(t, ctx, cs, "list alerts", 3)
	if len(fr.Servers) != 1 || fr.Servers[0].Server != "workspace" || fr.Servers[0].State != string(hosted.StateNeedsApproval) ||
		!strings.Contains(fr.Servers[0].Fix, "berth servers approve") {
		t.Errorf("find_tools servers = %+v", fr.Servers)
	}
}

// TestLazyServersToolsAreKeptByDigest: before a lazy server's first start
// find_tools says its tools are not known yet and call_tool of one starts
// it; its tools are then kept in berth.db by the definition's digest, so
// that a project opened again ranks them before the server starts; a
// changed definition's are not known.
func TestLazyServersToolsAreKeptByDigest(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	first := openFixture(t, []hosted.Decl{workspaceDecl(t)})
	cs := first.connect(t, "cursor", nil)
	fr := callFind(t, ctx, cs, "merge a pull request", 3)
	if slices.Contains(foundNames(fr), "workspace__merge_pull_request") || len(fr.Servers) != 1 ||
		!strings.Contains(fr.Servers[0].Note, "not known") || !strings.Contains(fr.Servers[0].Note, "call_tool") {
		t.Fatalf("before the server started: %+v", fr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": "workspace__list_alerts"}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool started no server: %v %s", err, brokertest.ResultText(res))
	}
	if got := foundNames(callFind(t, ctx, cs, "merge a pull request", 3)); !slices.Contains(got, "workspace__merge_pull_request") {
		t.Fatalf("after the start: %v", got)
	}
	brokertest.Eventually(t, "the started server's 100 tools cached", func() bool {
		tools, _ := first.finder.opts.Cache.Load(workspaceDecl(t).Server.Digest())
		return len(tools) == 100
	})

	// The same berth.db, a new broker: the lazy server has not started.
	again := openFixtureWith(t, []hosted.Decl{workspaceDecl(t)}, fixtureOpts{db: first.db})
	cs2 := again.connect(t, "cursor", nil)
	fr = callFind(t, ctx, cs2, "merge a pull request", 3)
	if !slices.Contains(foundNames(fr), "workspace__merge_pull_request") || len(fr.Servers) != 1 || !strings.Contains(fr.Servers[0].Note, "last ran") {
		t.Fatalf("from the cache: %+v", fr)
	}
	if st := again.hp.Status()[0].State; st == hosted.StateRunning {
		t.Errorf("find_tools started the lazy server (%s)", st)
	}

	// Another definition (one more argument) has its own digest.
	changed := workspaceDecl(t)
	changed.Server.Args = []string{"-test.run=^$"}
	third := openFixtureWith(t, []hosted.Decl{changed}, fixtureOpts{db: first.db})
	fr = callFind(t, ctx, third.connect(t, "cursor", nil), "merge a pull request", 3)
	if slices.Contains(foundNames(fr), "workspace__merge_pull_request") {
		t.Errorf("a changed definition's tools were taken from the cache: %+v", fr)
	}
}

// TestAutoModeKeepsTheFullListingForClientsThatSearch: auto lists the
// finder past mcp.finder_threshold tools, except to the clients of
// finder.clients_with_tool_search; a client's own ask wins.
func TestAutoModeKeepsTheFullListingForClientsThatSearch(t *testing.T) {
	cfg := config.Default()
	cfg.MCP.ToolsListing = config.ListingAuto
	for _, tc := range []struct {
		asked  Mode
		client string
		tools  int
		want   Mode
	}{
		{"", "cursor", 41, ModeFinder},
		{"", "cursor", 40, ModeAll},
		{"", "claude-code", 200, ModeAll},
		{"", "github-copilot-developer", 200, ModeAll},
		{ModeFinder, "claude-code", 3, ModeFinder},
		{ModeAll, "cursor", 200, ModeAll},
		{ModeAuto, "zed", 41, ModeFinder},
	} {
		ss := sessionOf(t, tc.client)
		if got := decide(tc.asked, cfg, ss, tc.tools); got != tc.want {
			t.Errorf("asked %q, client %s, %d tools: %s, want %s", tc.asked, tc.client, tc.tools, got, tc.want)
		}
	}
	cfg.Finder.ClientsWithToolSearch = []string{"zed"}
	if got := decide("", cfg, sessionOf(t, "claude-code"), 200); got != ModeFinder {
		t.Errorf("claude-code off the configured list: %s", got)
	}
	cfg.MCP.ToolsListing = config.ListingAll
	if got := decide("", cfg, sessionOf(t, "cursor"), 500); got != ModeAll {
		t.Errorf("tools_listing all: %s", got)
	}
}

// sessionOf is a server session whose client initialized as client.
func sessionOf(t testing.TB, client string) *mcp.ServerSession {
	t.Helper()
	ss, _ := connectTo(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil), client, nil)
	return ss
}
