package systest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubcommandHelpPrintsFlags: --help (or -h) of a command prints its
// usage and flags and exits 0; commands that take a directory do not
// take --help for one.
func TestSubcommandHelpPrintsFlags(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	env := userEnv(userHome(t), "BERTH_HOME="+brokertest.Home(t))
	for _, tc := range []struct {
		args     []string
		mentions []string
	}{
		{[]string{"ide-config", "--help"}, []string{"usage: berth ide-config", "--write", "--scope", "--transport"}},
		{[]string{"ide-config", "import", "-h"}, []string{"usage: berth ide-config import APP", "--scope"}},
		{[]string{"call", "--help"}, []string{"usage: berth call", "--project"}},
		{[]string{"servers", "--help"}, []string{"--project", "--json"}},
		{[]string{"servers", "approve", "--help"}, []string{"usage: berth servers approve DIR [NAME...]"}},
		{[]string{"attach", "--help"}, []string{"usage: berth attach DIR", "serve a project over HTTP"}},
		{[]string{"service", "--help"}, []string{"usage: berth service", "--kind"}},
		{[]string{"example-server", "--help"}, []string{"--dir"}},
	} {
		out, code := runAs(t, env, tc.args...)
		if code != 0 || strings.Contains(out, "help requested") {
			t.Errorf("berth %v: exit %d\n%s", tc.args, code, out)
		}
		for _, m := range tc.mentions {
			if !strings.Contains(out, m) {
				t.Errorf("berth %v does not mention %q:\n%s", tc.args, m, out)
			}
		}
	}
}

// TestHelpNamesTheConfigInUse: `berth --help` names the home and the
// config file the broker of that home reads: $BERTH_HOME/config.yaml
// when BERTH_HOME is set, the user's XDG file otherwise.
func TestHelpNamesTheConfigInUse(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	berthHome := brokertest.Home(t)
	out, _ := runAs(t, userEnv(home, "BERTH_HOME="+berthHome), "--help")
	if !strings.Contains(out, "The broker's home is "+berthHome+"; its settings are in\n"+filepath.Join(berthHome, "config.yaml")+" (none yet)") {
		t.Errorf("berth --help with BERTH_HOME:\n%s", out)
	}
	writeFile(t, filepath.Join(userConfigDir(home), "berth", "config.yaml"), "mount_grace: 10s\n")
	out, _ = runAs(t, userEnv(home), "--help")
	if !strings.Contains(out, "its settings are in\n"+filepath.Join(userConfigDir(home), "berth", "config.yaml")+" (docs") {
		t.Errorf("berth --help for the default home:\n%s", out)
	}
}

// TestImportProjectLooksWhereTheAppLooks: with the servers in the user's
// ~/.cursor/mcp.json and none in the project's, a project import says
// which file holds them and the command that moves them (--scope user),
// and changes nothing; that command moves them into the broker's config,
// saying the file they came from.
func TestImportProjectLooksWhereTheAppLooks(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	env := shimOnPath(t, userEnv(home))
	root := brokertest.Project(t, "looks", nil)
	user := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, user, `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	snap := tree(t, root)
	out, code := runAs(t, env, "ide-config", "import", "cursor", "--project", root)
	want := "Cursor also starts 1 server(s) from your own file " + user + " (memory), in every project: they stay there; `berth ide-config import cursor --scope user` moves them into the broker's config"
	if code != 0 || !strings.Contains(out, "Cursor has no file at "+filepath.Join(root, ".cursor", "mcp.json")+": nothing to import") || !strings.Contains(out, want) {
		t.Fatalf("project import: exit %d\n%s", code, out)
	}
	if d := tree(t, root); len(d) != len(snap) {
		t.Errorf("the project import wrote files: %v", d)
	}
	cmd := exec.Command(brokertest.Berth(t), "ide-config", "import", "cursor", "--scope", "user")
	cmd.Env, cmd.Dir = env, root
	raw, err := cmd.CombinedOutput()
	cfg := filepath.Join(userConfigDir(home), "berth", "config.yaml")
	if err != nil || !strings.Contains(string(raw), "imported 1 server(s) from "+user+" into "+cfg) {
		t.Fatalf("import --scope user: %v\n%s", err, raw)
	}
	if got := string(mustRead(t, cfg)); !strings.Contains(got, "# imported from Cursor (~/.cursor/mcp.json)\n  memory:") {
		t.Errorf("the broker's config:\n%s", got)
	}
}

// TestStopEndsHostedServersWithoutDeadlineErrors: an unmount (the grace
// over) and `berth stop` end a project holding a running server that
// ignores the end of its input (server-everything) and a failed one (its
// command does not exist), and `berth stop` the streams of an HTTP
// session too, without
// "stop hosted servers ... context deadline exceeded" in the log: every
// server has its own bound, and one that never ran has nothing to wait
// for. The stop's duration is logged.
func TestStopEndsHostedServersWithoutDeadlineErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, script := brokertest.NPMServer(t, "server-everything")
	b := brokertest.StartBroker(t, brokertest.Options{MountGrace: "1s"})
	root := brokertest.Project(t, "stops", nil)
	writeServers(t, root, fmt.Sprintf("  everything:\n    command: %q\n    args: [%q, stdio]\n  ghost:\n    command: sh\n    args: [-c, 'exit 7']\n    start: eager\n", node, script))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	for round, end := range []string{"unmount", "stop"} {
		tr, _ := shimTransport(t, b.Home, root)
		ide := connectMCP(t, ctx, tr)
		callText(t, ctx, ide, "everything__echo", map[string]any{"message": "hi"})
		sf, err := api.ReadStateFile(root)
		if err != nil || sf.URL == nil {
			t.Fatalf("state file: %+v %v", sf, err)
		}
		agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL}) // with its GET stream
		callText(t, ctx, agent, "everything__echo", map[string]any{"message": "there"})
		brokertest.Eventually(t, "the ghost server failed", func() bool { return serverStatus(t, ctx, b, root, "ghost").State == api.ServerFailed })
		start := time.Now()
		if end == "unmount" {
			// A session in use holds the project: the grace starts once
			// both the window and the agent are gone.
			ide.Close()
			agent.Close()
			brokertest.Eventually(t, "the project unmounted after its grace", func() bool {
				ps, err := b.Client.Projects(ctx)
				return err == nil && len(ps) == 0
			})
		} else {
			if out, code := berthCmd(t, b.Home, "stop"); code != 0 {
				t.Fatalf("berth stop: %d %s", code, out)
			}
			t.Logf("berth stop took %v with a running server, a failed one and an HTTP session's streams", time.Since(start).Round(time.Millisecond))
		}
		raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "stop hosted servers") || strings.Contains(line, "deadline exceeded") {
				t.Errorf("round %d (%s): the log says %s", round, end, line)
			}
		}
	}
}

// TestStopWithAnIDEOpenStartsNoNewBroker: `berth stop` of a broker this
// shim did not start (a service, `berth serve`): the window's shim does
// not start another, it waits; a broker started again is found, and the
// window's tools work on it.
func TestStopWithAnIDEOpenStartsNoNewBroker(t *testing.T) {
	// Serial: its auto-started broker missed the connect deadline beside other brokers starting.
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	failOnBrokersLeft(t, b.Home)
	root := brokertest.Project(t, "open", nil)
	tr, cmd := shimTransport(t, b.Home, root)
	stderr := &brokertest.SyncBuffer{}
	cmd.Stderr = stderr
	ide := connectMCP(t, ctx, tr)
	callOK(t, ctx, ide, "get_server_info", nil)
	if out, code := berthCmd(t, b.Home, "stop"); code != 0 {
		t.Fatalf("berth stop: %d %s", code, out)
	}
	brokertest.Eventually(t, "the shim finds the broker gone", func() bool {
		return strings.Contains(stderr.String(), "the broker is gone; reconnecting")
	})
	if left := brokertest.BrokerProcesses(t, b.Home); len(left) != 0 {
		t.Fatalf("the shim started broker %v, which it had not started before", left)
	}
	if _, err := api.NewUnixClient(api.SocketPath(b.Home)).Health(ctx); err == nil {
		t.Fatal("a broker answers after berth stop")
	}
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: b.Home})
	brokertest.Eventually(t, "the shim reconnected to the broker started again", func() bool {
		return strings.Contains(stderr.String(), "reconnected to broker")
	})
	if info := getServerInfo(t, ctx, ide); info.Server.PID != b2.PID() {
		t.Fatalf("the window reached broker %d, want %d", info.Server.PID, b2.PID())
	}
	// The window closes before b2 is killed: a shim that loses a broker
	// killed, not stopped, starts another.
	if err := ide.Close(); err != nil {
		t.Logf("close the window: %v", err)
	}
}

// TestServersOfAProjectWithoutABroker: `berth servers --project DIR`
// lists a project's servers when no broker runs (one is started for it,
// as for `berth call`); without --project it still needs none.
func TestServersOfAProjectWithoutABroker(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	root := brokertest.Project(t, "nobroker", nil)
	writeServers(t, root, "  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n")
	if out, code := berthCmd(t, home, "servers"); code != 1 || !strings.Contains(out, "no broker answers") {
		t.Errorf("berth servers with no broker: exit %d\n%s", code, out)
	}
	out, code := berthCmd(t, home, "servers", "--project", root)
	if code != 0 {
		t.Fatalf("berth servers --project with no broker: exit %d\n%s", code, out)
	}
	mustContain(t, out, "nobroker", "memory", "needs approval", "berth servers approve "+root)
	if out, code := berthCmd(t, home, "stop"); code != 0 {
		t.Fatalf("berth stop: %d %s", code, out)
	}
}

// TestProjectFlagFindsTheProjectAbove: --project naming a subfolder of a
// project (as --project ${workspaceFolder} does when the window is opened
// there) reaches the project, for the shim and the CLI; a folder with no
// project above it is served as a folder of its own.
func TestProjectFlagFindsTheProjectAbove(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "above", map[string]string{"src/pkg/x.go": "package pkg\n"})
	sub := filepath.Join(root, "src", "pkg")
	tr, _ := shimTransport(t, b.Home, sub)
	ide := connectMCP(t, ctx, tr)
	if info := getServerInfo(t, ctx, ide); info.Project.Root != root {
		t.Fatalf("berth-shim --project %s reached %s, want %s", sub, info.Project.Root, root)
	}
	out, code := berthCmd(t, b.Home, "call", "--project", sub, "get_server_info")
	if code != 0 || !strings.Contains(out, root) {
		t.Errorf("berth call --project %s: exit %d\n%s", sub, code, out)
	}
	lone := t.TempDir()
	out, code = berthCmd(t, b.Home, "call", "--project", lone, "get_server_info")
	var info struct {
		Project struct{ Root, Kind string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.Project.Root != lone || info.Project.Kind != "folder" {
		t.Errorf("berth call --project %s (no project): exit %d, want the folder served\n%s", lone, code, out)
	}
}

// TestToolsWarningLoggedOnceAndReportedByDoctor: hosted servers that
// start one after another and take the project past mcp.max_tools_warning
// are logged once (not once per server), and doctor reports it.
func TestToolsWarningLoggedOnceAndReportedByDoctor(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	berth := brokertest.Berth(t)
	root := brokertest.Project(t, "many", map[string]string{
		".praxis-os/config.yaml": fmt.Sprintf("mcp:\n  max_tools_warning: 12\nservers:\n  a:\n    command: %q\n    args: [example-server, --dir, a]\n  b:\n    command: %q\n    args: [example-server, --dir, b]\n  c:\n    command: %q\n    args: [example-server, --dir, c]\n", berth, berth, berth),
	})
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	for _, s := range []string{"a", "b", "c"} { // each lazy server starts at its first call
		callOK(t, ctx, ide, s+"__list_notes", nil)
	}
	brokertest.Eventually(t, "three hosted servers running", func() bool {
		n := 0
		for _, s := range []string{"a", "b", "c"} {
			if serverStatus(t, ctx, b, root, s).State == api.ServerRunning {
				n++
			}
		}
		return n == 3
	})
	out, _ := berthCmd(t, b.Home, "doctor")
	if !strings.Contains(out, "project many offers") || !strings.Contains(out, "more than its mcp.max_tools_warning (12)") {
		t.Errorf("doctor does not report the tool count:\n%s", out)
	}
	raw, _ := os.ReadFile(filepath.Join(b.Home, api.LogName))
	if n := strings.Count(string(raw), "more tools than mcp.max_tools_warning"); n != 1 {
		t.Errorf("the warning is logged %d times, want once:\n%s", n, raw)
	}
}
