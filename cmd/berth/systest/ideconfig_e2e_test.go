package systest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type ideEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// readEntries reads the servers under key from path.
func readEntries(t *testing.T, path, key string) (map[string]json.RawMessage, map[string]ideEntry) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, raw)
	}
	var servers map[string]ideEntry
	if err := json.Unmarshal(top[key], &servers); err != nil {
		t.Fatalf("%s %q: %v", path, key, err)
	}
	return top, servers
}

// userConfigDir is os.UserConfigDir for a user whose HOME is home (no XDG_CONFIG_HOME).
func userConfigDir(home string) string {
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support")
	}
	return filepath.Join(home, ".config")
}

func TestIDEConfigWriteKeepsOtherEntriesAndRuns(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "shop", nil)
	env := userEnv(home, "BERTH_HOME="+b.Home)

	// Claude Desktop's file already has another server and app settings.
	claude := filepath.Join(userConfigDir(home), "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(claude), 0o755); err != nil {
		t.Fatal(err)
	}
	before := `{"globalShortcut": "Ctrl+Space", "mcpServers": {"github": {"command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_TOKEN": "x"}}}, "theme": {"dark": true}}`
	if err := os.WriteFile(claude, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runAs(t, env, "ide-config", "claude", "--project", root, "--write")
	if code != 0 || !strings.Contains(out, claude) {
		t.Fatalf("ide-config claude --write: exit %d\n%s", code, out)
	}
	top, servers := readEntries(t, claude, "mcpServers")
	want := ideEntry{Command: brokertest.Shim(t), Args: []string{"--project", root}, Env: map[string]string{"BERTH_HOME": b.Home}}
	if diff := cmp.Diff(want, servers["berth-shop"]); diff != "" {
		t.Errorf("berth-shop entry (-want +got):\n%s", diff)
	}
	if gh := servers["github"]; gh.Command != "docker" || len(gh.Args) != 3 || gh.Env["GITHUB_TOKEN"] != "x" {
		t.Errorf("the user's github server changed: %+v", gh)
	}
	if string(top["globalShortcut"]) != `"Ctrl+Space"` || !strings.Contains(string(top["theme"]), `"dark": true`) {
		t.Errorf("other top-level keys changed: %s", top)
	}
	written, _ := os.ReadFile(claude)
	if i, j, k := bytes.Index(written, []byte("globalShortcut")), bytes.Index(written, []byte(`"github"`)), bytes.Index(written, []byte("berth-shop")); !(i < j && j < k) {
		t.Errorf("key order not kept:\n%s", written)
	}
	if fi, err := os.Stat(claude); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v (%v), want the user's 0600 kept", fi.Mode().Perm(), err)
	}
	// Idempotent: the same command again changes nothing.
	out, code = runAs(t, env, "ide-config", "claude", "--project", root, "--write")
	if again, _ := os.ReadFile(claude); code != 0 || !bytes.Equal(again, written) || !strings.Contains(out, "nothing to change") {
		t.Fatalf("second --write: exit %d, changed %v\n%s", code, !bytes.Equal(again, written), out)
	}

	// The entry it wrote, run as the IDE runs it, reaches the project on the broker.
	e := servers["berth-shop"]
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env = userEnv(home)
	for k, v := range e.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = newLogWriter(t, "shim")
	ctx := testCtx(t, 60*time.Second)
	s := connectMCP(t, ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second})
	if info := getServerInfo(t, ctx, s); info.Server.PID != b.PID() || info.Project.Root != root {
		t.Fatalf("the written entry reached broker %d, project %s; want %d, %s", info.Server.PID, info.Project.Root, b.PID(), root)
	}
}

func TestIDEConfigFormatsPerApp(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	root := brokertest.Project(t, "web", nil)
	env := userEnv(home)
	shim := brokertest.Shim(t)
	for _, tc := range []struct {
		args []string
		file string
		key  string
		name string
		want ideEntry
	}{
		{[]string{"cursor"}, filepath.Join(home, ".cursor", "mcp.json"), "mcpServers", "berth",
			ideEntry{Command: shim, Args: []string{"--project", "${workspaceFolder}"}}},
		{[]string{"cursor", "--project", root}, filepath.Join(root, ".cursor", "mcp.json"), "mcpServers", "berth",
			ideEntry{Command: shim, Args: []string{"--project", root}}},
		{[]string{"vscode", "--project", root}, filepath.Join(root, ".vscode", "mcp.json"), "servers", "berth",
			ideEntry{Type: "stdio", Command: shim, Args: []string{"--project", root}}},
		{[]string{"windsurf", "--project", root}, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"), "mcpServers", "berth-web",
			ideEntry{Command: shim, Args: []string{"--project", root}}},
		{[]string{"claude", "--project", root, "--name", "shop-tools"}, filepath.Join(userConfigDir(home), "Claude", "claude_desktop_config.json"), "mcpServers", "shop-tools",
			ideEntry{Command: shim, Args: []string{"--project", root}}},
	} {
		// Printed: the snippet on stdout, where it goes on stderr.
		cmd := exec.Command(brokertest.Berth(t), append([]string{"ide-config"}, tc.args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), tc.file) {
			t.Fatalf("berth ide-config %v: %v\nstdout: %s\nstderr: %s", tc.args, err, stdout.String(), stderr.String())
		}
		var printed map[string]map[string]ideEntry
		if err := json.Unmarshal(stdout.Bytes(), &printed); err != nil {
			t.Fatalf("%v printed invalid JSON: %v\n%s", tc.args, err, stdout.String())
		}
		if diff := cmp.Diff(tc.want, printed[tc.key][tc.name]); diff != "" {
			t.Errorf("%v printed (-want +got):\n%s", tc.args, diff)
		}
		if _, err := os.Stat(tc.file); err == nil {
			t.Errorf("%v without --write created %s", tc.args, tc.file)
		}
		// Written: a new file holding the same entry.
		if out, code := runAs(t, env, append([]string{"ide-config"}, append(tc.args, "--write")...)...); code != 0 || !strings.Contains(out, "wrote "+tc.file) {
			t.Fatalf("%v --write: exit %d\n%s", tc.args, code, out)
		}
		if _, got := readEntries(t, tc.file, tc.key); !cmp.Equal(got[tc.name], tc.want) {
			t.Errorf("%v wrote %+v", tc.args, got)
		}
	}
}

func TestIDEConfigRefusesBrokenFileAndBadInput(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	root := brokertest.Project(t, "web", nil)
	env := userEnv(home)
	file := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	// A missing comma: not JSON even with comments and trailing commas.
	broken := "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"y\"}\n    \"z\": {}\n  }\n}\n"
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runAs(t, env, "ide-config", "windsurf", "--project", root, "--write")
	want := "berth ide-config: cannot change " + file + ": invalid JSON at line 4, column 5: invalid character '\"' after object value (expecting ',' or '}'); fix the file or move it aside and run again (nothing was changed)\n"
	if code != 1 || out != want {
		t.Fatalf("broken file: exit %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(file); string(got) != broken {
		t.Fatalf("broken file was changed:\n%s", got)
	}
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("files left beside it: %v", ents)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		mention string
	}{
		{[]string{"ide-config"}, 2, "cursor, claude, vscode, windsurf"},
		{[]string{"ide-config", "emacs"}, 2, `unknown app "emacs"`},
		{[]string{"ide-config", "vscode", "--project", t.TempDir()}, 1, ".praxis-os"},
		{[]string{"ide-config", "cursor", "--bogus"}, 2, "unknown flag"},
	} {
		if out, code := runAs(t, env, tc.args...); code != tc.code || !strings.Contains(out, tc.mention) {
			t.Errorf("berth %v: exit %d %q; want exit %d mentioning %q", tc.args, code, out, tc.code, tc.mention)
		}
	}
}
