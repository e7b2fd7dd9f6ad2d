package systest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFolderWithoutPraxisOSIsServed: a window on a folder in no project
// (no .praxis-os/ in it or above it) is served, found from the shim's
// working directory as from --project: Berth's tools that need no
// standards, search_standards and the workflow tools saying how to start
// using .praxis-os/, and the user's hosted server (the broker config's
// server-memory), called through the shim. `berth projects` lists the
// folder with its kind; nothing is written into it. When the folder gains
// a .praxis-os/ folder, its windows' shims get the project, and so does a
// pin at once.
func TestFolderWithoutPraxisOSIsServed(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	b := memoryBroker(t, "")
	folder, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "notes.md"), []byte("# my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, folder)

	// A client without roots, as Claude Code: the working directory.
	tr, _ := shimIn(t, b.Home, folder)
	ide := connectWith(t, ctx, tr, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	tools, err := ide.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"get_server_info", "current_date", "search_standards", "list_workflows", "start_workflow", "memory__create_entities", "memory__read_graph"} {
		if !hasTool(tools.Tools, want) {
			t.Errorf("the folder's tools lack %s: %v", want, toolNames(tools.Tools))
		}
	}
	if hasTool(tools.Tools, "get_current_phase") {
		t.Errorf("a folder serves the workflow engine's tools: %v", toolNames(tools.Tools))
	}
	callText(t, ctx, ide, "memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "folder", "entityType": "note", "observations": []any{"served without .praxis-os"}}}})

	// The TypeScript SDK's client through berth-shim --project (the
	// guide's connect.mjs), as an app launched by its MCP config.
	if tsTools := runTSClient(t, needTSClient(t), b, "connect.mjs", folder, "stdio", "stdio"); !slices.Contains(tsTools, "memory__read_graph") {
		t.Errorf("the TypeScript SDK's tools/list through the shim lacks the user's server: %v", tsTools)
	}

	// Another window, --project naming the folder: the same mount and server.
	tr2, _ := shimTransport(t, b.Home, folder)
	other := connectMCP(t, ctx, tr2)
	if got := callText(t, ctx, other, "memory__read_graph", map[string]any{}); !strings.Contains(got, "served without .praxis-os") {
		t.Errorf("the second window reads %q", got)
	}
	info := getServerInfo(t, ctx, other)
	if info.Project.Root != folder || info.Server.Transport != "stdio" {
		t.Errorf("get_server_info: %+v", info)
	}
	res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(brokertest.ResultText(res), `"kind":"folder"`) {
		t.Errorf("get_server_info does not say the kind: %v %s", err, brokertest.ResultText(res))
	}
	for _, tool := range []string{"search_standards", "start_workflow"} {
		got := callText(t, ctx, other, tool, map[string]any{"query": "how do we test", "workflow_type": "x", "target_file": "y"})
		for _, want := range []string{folder + " has no .praxis-os/ folder", filepath.Join(folder, ".praxis-os", "standards")} {
			if !strings.Contains(got, want) {
				t.Errorf("%s answers %q, which lacks %q", tool, got, want)
			}
		}
	}

	id := api.ProjectID(folder)
	p, err := b.Client.Project(ctx, id)
	if err != nil || p.Kind != api.KindFolder || p.Holders != 2 || p.Transport != "" || p.Port == 0 {
		t.Errorf("GET /projects/%s: %+v %v; want a folder held by two windows with a port and no state file", id, p, err)
	}
	out, code := berthCmd(t, b.Home, "projects")
	if code != 0 || !strings.Contains(out, "folder (no .praxis-os)") || !strings.Contains(out, folder) {
		t.Errorf("berth projects (exit %d) does not list the folder:\n%s", code, out)
	}
	if l, ok := projectsJSON(t, b.Home); !ok || len(l.Projects) != 1 || l.Projects[0].Kind != api.KindFolder {
		t.Errorf("berth projects --json: %+v", l)
	}
	// The user's server of a folder is listed and restarted as a project's is.
	out, code = berthCmd(t, b.Home, "servers", "--project", folder)
	if code != 0 || !strings.Contains(out, "memory") || !strings.Contains(out, string(api.ServerRunning)) {
		t.Errorf("berth servers --project FOLDER (exit %d):\n%s", code, out)
	}
	if out, code := berthCmd(t, b.Home, "servers", "restart", folder, "memory"); code != 0 {
		t.Errorf("berth servers restart FOLDER memory (exit %d):\n%s", code, out)
	}
	brokertest.Eventually(t, "the restarted server answers the second window", func() bool {
		res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
		return err == nil && !res.IsError && strings.Contains(brokertest.ResultText(res), "served without .praxis-os")
	})
	if diff := cmp.Diff(before, tree(t, folder)); diff != "" {
		t.Errorf("the folder changed while served (-before +after):\n%s", diff)
	}

	// The folder becomes a project: the mount ends, the windows' shims
	// attach again and get the project, its standards searched.
	if err := os.MkdirAll(filepath.Join(folder, ".praxis-os", "standards"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, ".praxis-os", "standards", "testing.md"), []byte("# Testing\n\nEvery giraffe test runs real processes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A pin right away gets the project, even before the broker's next
	// look at its mounts ends the folder's.
	if resp := b.Attach(t, folder); resp.Kind != api.KindProject {
		t.Errorf("berth attach of the folder that became a project got %+v", resp.Project)
	}
	brokertest.Eventually(t, "the folder served as a project, held by both windows and the pin", func() bool {
		p, err := b.Client.Project(ctx, id)
		return err == nil && p.Kind == api.KindProject && p.Holders == 3
	})
	brokertest.Eventually(t, "search_standards of the project through the first window", func() bool {
		res, err := ide.CallTool(ctx, &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": "giraffe"}})
		return err == nil && !res.IsError && strings.Contains(brokertest.ResultText(res), "testing.md")
	})
	if !strings.Contains(b.Stderr(), "serving it as a project") && !strings.Contains(b.Stderr(), "the root changed kind") {
		t.Errorf("the broker log does not say why the folder's mount ended")
	}
}

// TestHomeDirectoryIsNeverAFolder: a shim whose working directory
// is the user's home directory and whose client names no workspace
// folder is refused with the fix, and nothing is mounted; with --project
// naming a folder inside the home directory it is served.
func TestHomeDirectoryIsNeverAFolder(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	userHome, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := shimIn(t, b.Home, userHome, "HOME="+userHome)
	err = connectErr(t, tr, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	for _, want := range []string{userHome + " is your home directory", "--project DIR", ".praxis-os/"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a shim in the home directory: %v; want an error naming %q", err, want)
		}
	}
	ctx := testCtx(t, 2*time.Minute)
	if ps, err := b.Client.Projects(ctx); err != nil || len(ps) != 0 {
		t.Errorf("mounted after the refusal: %+v %v", ps, err)
	}
	inside := filepath.Join(userHome, "work")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	tr, _ = shimTransport(t, b.Home, inside, "HOME="+userHome)
	if info := getServerInfo(t, ctx, connectMCP(t, ctx, tr)); info.Project.Root != inside {
		t.Errorf("a folder inside the home directory: %+v", info)
	}
}
