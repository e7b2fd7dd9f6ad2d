package project

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestNameFromRemote(t *testing.T) {
	for in, want := range map[string]string{
		"git@github.com:user/repo.git":     "repo",
		"https://github.com/user/repo":     "repo",
		"https://github.com/user/repo.git": "repo",
		"ssh://git@host:22/a/b/shop.git/":  "shop",
		"/srv/git/local.git":               "local",
		"":                                 "",
	} {
		if got := NameFromRemote(in); got != want {
			t.Errorf("NameFromRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

func openEngine(t *testing.T, root string) *Engine {
	t.Helper()
	db := storetest.Open(t, "")
	e, err := Open(context.Background(), Options{Root: root, ID: "p-1", DB: db, Server: ServerInfo{Version: "t", PID: 1, StartedAt: time.Now()},
		Transports: []string{"test"}, TransportOf: func(context.Context) string { return "test" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// connectInMemory connects a go-sdk client to e's server; both end with
// the test.
func connectInMemory(t *testing.T, e *Engine) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, e, nil)
}

// connectWith is connectInMemory with the client's options.
func connectWith(t *testing.T, e *Engine, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectServer(t, e.Server(), opts)
}

// connectServer connects a go-sdk client to s in memory; both end with
// the test.
func connectServer(t *testing.T, s *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callInfo(t *testing.T, e *Engine) ServerInfoResult {
	t.Helper()
	ctx := context.Background()
	cs := connectInMemory(t, e)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out ServerInfoResult
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestServerInfoReadsGitOncePerTTL(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it")
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	e := openEngine(t, root)
	now := time.Now()
	e.git.now = func() time.Time { return now } // called only under the cache's lock
	if info := callInfo(t, e); info.Project.Git != nil || info.Project.Name != filepath.Base(root) {
		t.Fatalf("before git init: %+v", info.Project)
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "git@example.invalid:team/shop.git")
	os.WriteFile(filepath.Join(root, "README"), []byte("x"), 0o644)
	git("add", "README")
	git("commit", "-q", "-m", "first")
	if info := callInfo(t, e); info.Project.Git != nil {
		t.Fatalf("within the TTL the last read is kept, got %+v", info.Project.Git)
	}
	now = now.Add(gitTTL)
	info := callInfo(t, e)
	g := info.Project.Git
	if g == nil || g.Branch != "main" || len(g.Commit) != 40 || g.CommitShort != g.Commit[:7] || g.Status != "clean" || g.Remote != "git@example.invalid:team/shop.git" {
		t.Fatalf("git = %+v", g)
	}
	if info.Project.Name != "shop" || info.Project.PraxisOSPath != filepath.Join(root, ".praxis-os") || info.Project.AgentOSPath != info.Project.PraxisOSPath {
		t.Fatalf("project = %+v", info.Project)
	}
	os.WriteFile(filepath.Join(root, "README"), []byte("changed"), 0o644)
	now = now.Add(gitTTL)
	if st := callInfo(t, e).Project.Git.Status; st != "dirty" {
		t.Fatalf("status after an edit = %q", st)
	}
	if info.Server.Transport != "test" || info.Server.PID != 1 || info.Capabilities.ToolsAvailable != len(info.Capabilities.Tools) || info.Capabilities.ToolsAvailable == 0 {
		t.Fatalf("server = %+v caps = %+v", info.Server, info.Capabilities)
	}
}

func TestToolGroupsSelectTools(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	os.WriteFile(filepath.Join(root, ".praxis-os", "config.yaml"), []byte("mcp:\n  enabled_tool_groups: [pos]\n"), 0o644)
	e := openEngine(t, root)
	callInfo(t, e)
	got := map[string]bool{}
	for _, n := range e.ToolNames() {
		got[n] = true
	}
	if !got["pos_workflow"] || !got["get_server_info"] || !got["current_date"] || got["search_standards"] || got["start_workflow"] {
		t.Fatalf("tools with [pos]: %v", e.ToolNames())
	}
}

func TestServerInfoSchemasAndArguments(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	e := openEngine(t, root)
	ctx := context.Background()
	cs := connectInMemory(t, e)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "get_server_info" {
			listed = tl
		}
	}
	if listed == nil {
		t.Fatal("get_server_info not listed")
	}
	raw, _ := json.Marshal(listed)
	var shape struct {
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema struct {
			Properties map[string]any `json:"properties"`
		} `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	if shape.InputSchema["type"] != "object" || shape.InputSchema["additionalProperties"] != false {
		t.Errorf("input schema = %v, want a closed empty object", shape.InputSchema)
	}
	for _, k := range []string{"server", "project", "capabilities"} {
		if _, ok := shape.OutputSchema.Properties[k]; !ok {
			t.Errorf("output schema lacks %q: %s", k, raw)
		}
	}

	for _, args := range []any{nil, map[string]any{}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: args})
		if err != nil || res.IsError || res.StructuredContent == nil || len(res.Content) != 1 {
			t.Fatalf("arguments %v: %v %+v", args, err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var out ServerInfoResult
		if err := json.Unmarshal([]byte(text), &out); err != nil || out.Project.Root != root {
			t.Errorf("text content %q: %v", text, err)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{"verbose": true}})
	if err != nil || !res.IsError {
		t.Fatalf("an unknown argument: %v %+v, want a tool error", err, res)
	}
	if msg := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(msg, "verbose") {
		t.Errorf("error %q does not name the argument", msg)
	}
}

func FuzzNoArguments(f *testing.F) {
	for _, s := range []string{"", "null", "{}", " { } ", `{"a":1}`, "[]", "1", `"x"`, "{", `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		err := noArguments(args)
		var m map[string]json.RawMessage
		emptyObject := json.Unmarshal(args, &m) == nil && m != nil && len(m) == 0
		trimmed := strings.Trim(string(args), " \t\r\n")
		if ok := trimmed == "" || trimmed == "null" || emptyObject; ok != (err == nil) {
			t.Errorf("noArguments(%q) = %v", args, err)
		}
	})
}

// get_server_info answers in praxis-os's shape (its names and JSON types,
// from praxis-os's server_info_tools.py), with Berth's fields beside them.
func TestServerInfoHasPraxisOSShape(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	os.WriteFile(filepath.Join(root, ".praxis-os", "config.yaml"), []byte("mcp:\n  enabled_tool_groups: [rag]\n"), 0o644)
	db := storetest.Open(t, "")
	ep := Endpoint{Mode: "dual", URL: "http://127.0.0.1:4242/mcp"}
	e, err := Open(context.Background(), Options{Root: root, ID: "p-1", DB: db, Server: ServerInfo{Version: "t", PID: 1, StartedAt: time.Now()},
		Endpoint: func() Endpoint { return ep }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := connectInMemory(t, e).CallTool(context.Background(), &mcp.CallToolParams{Name: "get_server_info"})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var got map[string]map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		section, key string
		value        any
	}{
		{"server", "transport_mode", "dual"},
		{"server", "pid", float64(1)},
		{"server", "version", "t"},
		{"project", "praxis_os_path", filepath.Join(root, ".praxis-os")},
		{"project", "root", root},
		{"capabilities", "tools_available", float64(len(e.ToolNames()))},
		{"capabilities", "rag_enabled", true},
		{"capabilities", "workflow_enabled", false},
		{"capabilities", "browser_enabled", false},
		{"capabilities", "dual_transport", true},
		{"capabilities", "http_transport", true},
	} {
		if v, ok := got[want.section][want.key]; !ok || v != want.value {
			t.Errorf("%s.%s = %#v (present %v), want %#v", want.section, want.key, v, ok, want.value)
		}
	}
	for _, k := range []string{"uptime_seconds", "started_at"} {
		if _, ok := got["server"][k]; !ok {
			t.Errorf("server.%s missing", k)
		}
	}
	if _, ok := got["project"]["git"]; !ok {
		t.Error("project.git missing (null when not a repository)")
	}

	// A stdio window alone, and no port: neither transport is claimed.
	ep = Endpoint{Mode: "stdio", Missing: []string{"no port: widen the range"}}
	info := callInfo(t, e)
	if info.Capabilities.DualTransport || info.Capabilities.HTTPTransport || info.Server.URL != "" || len(info.Missing) != 1 {
		t.Errorf("stdio with no port: %+v %+v missing %q", info.Server, info.Capabilities, info.Missing)
	}
}
