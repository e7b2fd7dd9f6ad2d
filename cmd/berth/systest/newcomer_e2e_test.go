package systest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// TestSubcommandHelpPrintsFlags: --help (or -h) of a command prints its
// usage and flags and exits 0; commands that take a directory do not
// take --help for one.
func TestSubcommandHelpPrintsFlags(t *testing.T) {
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
