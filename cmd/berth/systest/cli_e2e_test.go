package systest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
)

func berthCmd(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(brokertest.Berth(t), args...)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home)
	brokertest.DieWithTest(cmd)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestCLIFailuresNameTheFix(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	for _, tc := range []struct {
		args    []string
		code    int
		mention string
	}{
		{[]string{"projects"}, 1, "berth serve"},
		{[]string{"detach", t.TempDir()}, 1, ".praxis-os"},
		{[]string{"attach"}, 2, "usage: berth attach DIR"},
		{[]string{"call", "--project", "/", "get_server_info"}, 1, ".praxis-os"},
		{[]string{"call", "get_server_info", "{not json"}, 2, "JSON object"},
		{[]string{"nonsense"}, 2, "berth help"},
		{[]string{"serve", "--ports-start", "6000", "--ports-end", "5000", "--listen", ""}, 1, "ports.start"},
	} {
		out, code := berthCmd(t, home, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.mention) {
			t.Errorf("berth %v: exit %d, %q; want exit %d mentioning %q", tc.args, code, out, tc.code, tc.mention)
		}
		if n := strings.Count(strings.TrimSpace(out), "\n"); tc.code == 1 && n > 0 {
			t.Errorf("berth %v: %d lines, want one: %q", tc.args, n+1, out)
		}
	}
	if out, code := berthCmd(t, home, "version"); code != 0 || !strings.HasPrefix(out, "berth ") {
		t.Errorf("berth version: %d %q", code, out)
	}
}

// TestCallOfAnUnknownToolNamesTheFix: `berth call` of a tool the project
// does not offer names the closest one and how to list them; a known
// tool's own error gets no such hint.
func TestCallOfAnUnknownToolNamesTheFix(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "calls", nil)
	b.Attach(t, root)
	out, code := berthCmd(t, b.Home, "call", "--project", root, "serch_standards", `{"query": "x"}`)
	if want := "berth call: the project has no tool \"serch_standards\" (did you mean search_standards? list them with `berth tools --project " + root + "`)\n"; code != 1 || out != want {
		t.Errorf("unknown tool: exit %d, %q; want %q", code, out, want)
	}
	out, code = berthCmd(t, b.Home, "call", "--project", root, "no_such_tool")
	if want := "berth call: the project has no tool \"no_such_tool\" (list them with `berth tools --project " + root + "`)\n"; code != 1 || out != want {
		t.Errorf("unknown tool, nothing close: exit %d, %q; want %q", code, out, want)
	}
	out, code = berthCmd(t, b.Home, "call", "--project", root, "get_server_info", `{"unexpected": 1}`)
	if code != 1 || strings.Contains(out, "berth tools") {
		t.Errorf("a known tool's error: exit %d, %q; want exit 1 without the unknown-tool hint", code, out)
	}
}

// TestToolsListsNameGroupAndDescription: `berth tools` shows every tool
// the project serves with its group and whether finder mode lists it, and
// the size of each mode's listing, through the real broker.
func TestToolsListsNameGroupAndDescription(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "tools", map[string]string{".praxis-os/config.yaml": "mcp:\n  enabled_tool_groups: [rag, pos, browser]\n"})
	b.Attach(t, root)
	out, code := berthCmd(t, b.Home, "tools", "--project", root)
	if code != 0 {
		t.Fatalf("berth tools: exit %d\n%s", code, out)
	}
	table, summary, ok := strings.Cut(strings.TrimSpace(out), "\n\n")
	lines := strings.Split(table, "\n")
	if !ok || len(lines) < 3 || !strings.HasPrefix(lines[0], "TOOL") || !strings.Contains(lines[0], "GROUP") || !strings.Contains(lines[0], "FINDER") || !strings.Contains(lines[0], "DESCRIPTION") {
		t.Fatalf("berth tools output:\n%s", out)
	}
	groups, listed := map[string]string{}, map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 4 {
			t.Fatalf("line %q has no description", l)
		}
		groups[f[0]], listed[f[0]] = f[1], f[2]
	}
	want := map[string]string{"get_server_info": "always", "current_date": "always", "get_recent_logs": "always", "search_standards": "rag", "pos_workflow": "pos"}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("tools and groups (-want +got):\n%s", diff)
	}
	wantListed := map[string]string{"get_server_info": "listed", "current_date": "listed", "get_recent_logs": "found", "search_standards": "listed", "pos_workflow": "listed"}
	if diff := cmp.Diff(wantListed, listed); diff != "" {
		t.Errorf("finder column (-want +got):\n%s", diff)
	}
	if first := strings.Split(summary, "\n")[0]; first != fmt.Sprintf("5 tools; call one with `berth call --project %s TOOL [JSON-args]`", root) {
		t.Errorf("summary %q", first)
	}
	out, code = berthCmd(t, b.Home, "tools", "--project", root, "--json")
	var js struct {
		Tools    []struct{ Name, Group, Description string } `json:"tools"`
		Listings map[string]struct {
			Tools  []string `json:"tools"`
			Tokens int      `json:"tokens"`
		} `json:"listings"`
		ToolsListing string `json:"tools_listing"`
		Auto         string `json:"auto"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || len(js.Tools) != 5 || js.Tools[0].Description == "" {
		t.Fatalf("berth tools --json: exit %d, %v\n%s", code, err, out)
	}
	all, fm := js.Listings["all"], js.Listings["finder"]
	if len(all.Tools) != 5 || len(fm.Tools) != 6 || fm.Tools[0] != "find_tools" || fm.Tools[1] != "call_tool" ||
		all.Tokens < 500 || fm.Tokens <= 0 || js.ToolsListing != "all" || js.Auto != "all" {
		t.Errorf("listings: %+v, tools_listing %q, auto %q", js.Listings, js.ToolsListing, js.Auto)
	}
	// A misspelt flag names the right one.
	if out, code := berthCmd(t, b.Home, "tools", "--projct", root); code != 2 || !strings.Contains(out, "unknown flag --projct (did you mean --project?)") {
		t.Errorf("misspelt flag: exit %d %q", code, out)
	}
}

func TestConfigFileAndTCPControlAPI(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	ctlStart, _ := brokertest.PortRange(t, 1)
	start, end := brokertest.PortRange(t, 5)
	cfg := fmt.Sprintf("listen: 127.0.0.1:%d\nports:\n  start: %d\n  end: %d\nmount_grace: 200ms\n", ctlStart, start, end)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	b := brokertest.StartBroker(t, brokertest.Options{Home: home, Bare: true})
	resp := b.Attach(t, brokertest.Project(t, "cfg", nil))
	if resp.Port < start || resp.Port > end {
		t.Fatalf("port %d outside the config's %d-%d", resp.Port, start, end)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", ctlStart)
	tcp := api.NewTCPClient(fmt.Sprintf("127.0.0.1:%d", ctlStart))
	ctx := testCtx(t, 20*time.Second)
	ps, err := tcp.Projects(ctx)
	if err != nil || len(ps) != 1 || ps[0].ID != resp.ID {
		t.Fatalf("GET /projects over TCP: %v %v", ps, err)
	}
	// The dashboard is served at /.
	r, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(page), "<title>Berth</title>") || !strings.Contains(string(page), "/assets/app.js") {
		t.Fatalf("dashboard: %d %s", r.StatusCode, page)
	}
	// DNS rebinding: a foreign Host is refused on TCP.
	req, _ := http.NewRequest("GET", base+"/projects", nil)
	req.Host = "attacker.example"
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: %d, want 403", r.StatusCode)
	}
	// Environment beats the file: BERTH_PORTS_START is applied.
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	envStart, envEnd := brokertest.PortRange(t, 3)
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home, Bare: true, Env: []string{fmt.Sprintf("BERTH_PORTS_START=%d", envStart), fmt.Sprintf("BERTH_PORTS_END=%d", envEnd), "BERTH_LISTEN="}})
	resp2 := b2.Attach(t, brokertest.Project(t, "env", nil))
	if resp2.Port < envStart || resp2.Port > envEnd {
		t.Fatalf("port %d ignores BERTH_PORTS_START (%d-%d)", resp2.Port, envStart, envEnd)
	}
}

func TestAttachPinsAcrossRestartAndDetachReleases(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	root := brokertest.Project(t, "pinned", nil)
	if out, code := berthCmd(t, home, "attach", root); code != 0 || !strings.Contains(out, "http://127.0.0.1:") {
		t.Fatalf("attach: %d %s", code, out)
	}
	first, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--ports-start", fmt.Sprint(b.Start), "--ports-end", fmt.Sprint(b.End)}})
	ctx := testCtx(t, 30*time.Second)
	id := api.ProjectID(root)
	brokertest.Eventually(t, "pinned project mounted again", func() bool {
		p, err := b2.Client.Project(ctx, id)
		return err == nil && p.Pinned
	})
	brokertest.Eventually(t, "state file rewritten by the new broker", func() bool {
		sf, err := api.ReadStateFile(root)
		return err == nil && sf.PID == b2.PID()
	})
	sf, _ := api.ReadStateFile(root)
	if *sf.Port != *first.Port {
		t.Errorf("port moved from %d to %d across the restart", *first.Port, *sf.Port)
	}
	if out, code := berthCmd(t, home, "detach", root); code != 0 {
		t.Fatalf("detach: %d %s", code, out)
	}
	brokertest.Eventually(t, "unmounted after the grace period", func() bool {
		_, err := b2.Client.Project(ctx, id)
		return errors.Is(err, api.CodeNotMounted)
	})
	brokertest.Eventually(t, "state file removed after the unmount", func() bool {
		_, err := os.Stat(api.StatePath(root))
		return errors.Is(err, os.ErrNotExist)
	})
	if out, code := berthCmd(t, home, "detach", root); code != 1 || !strings.Contains(out, "berth attach") {
		t.Fatalf("second detach: %d %s", code, out)
	}
}

// TestProjectsShowIndexState: `berth projects` and its --json say where
// each project's search index is.
func TestProjectsShowIndexState(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	withIndex := brokertest.Project(t, "indexed", map[string]string{".praxis-os/standards/a.md": "# A\n\nalpha\n", ".praxis-os/standards/b.md": "# B\n\n## One\n\nbeta\n"})
	noIndex := brokertest.Project(t, "plain", map[string]string{".praxis-os/config.yaml": "mcp:\n  enabled_tool_groups: [workflow]\n"})
	b.Attach(t, withIndex)
	b.Attach(t, noIndex)
	var list api.ProjectList
	brokertest.Eventually(t, "the index ready in berth projects --json", func() bool {
		out, code := berthCmd(t, b.Home, "projects", "--json")
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Projects) != 2 {
			return false
		}
		ix := list.Projects[0].Index
		return ix != nil && ix.State == "ready"
	})
	if got := *list.Projects[0].Index; got != (api.IndexState{State: "ready", Files: 2, Sections: 2}) {
		t.Errorf("index of %s: %+v", withIndex, got)
	}
	if list.Projects[1].Index != nil {
		t.Errorf("a project without rag has an index: %+v", list.Projects[1].Index)
	}
	out, _ := berthCmd(t, b.Home, "projects")
	if !strings.Contains(out, "INDEX") || !strings.Contains(out, "ready, 2 files") || !strings.Contains(out, "  off  ") {
		t.Errorf("berth projects:\n%s", out)
	}
}
